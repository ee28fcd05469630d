// The Open Inference Protocol's request decoding and response encoding
// (src/serve/protocol.hpp); the server itself is tested over HTTP
// (tests/serve/test_serve.py).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "serve/protocol.hpp"

namespace vinfer::serve {
namespace {

std::string u32(std::uint32_t n) { return std::string(reinterpret_cast<const char*>(&n), 4); }

void expect_refused(const std::string& body, const std::string& needle, std::optional<std::size_t> header = std::nullopt) {
  try {
    parse_infer_request(body, header);
    ADD_FAILURE() << "accepted: " << body.substr(0, 120);
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ServeProtocol, JsonRequest) {
  const InferRequest r = parse_infer_request(
      R"({"id":"a1","parameters":{"top_k":3},"inputs":[{"name":"input","datatype":"FP32","shape":[1,2,2],"data":[[1,2],[3,4.5]]}],
          "outputs":[{"name":"logits","parameters":{"binary_data":true}},{"name":"topk_labels"}]})",
      std::nullopt);
  EXPECT_EQ(r.id, "a1");
  EXPECT_EQ(r.top_k, 3);
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].shape, (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ(r.inputs[0].fp32, (std::vector<float>{1, 2, 3, 4.5f}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_TRUE(r.outputs[0].binary);
  EXPECT_FALSE(r.outputs[1].binary);
}

// The binary tensor data extension, as tritonclient sends it: BYTES elements
// each behind a 4-byte length, FP32 raw, in input order after the JSON.
TEST(ServeProtocol, BinaryRequest) {
  const std::string a = "\xff\xd8jpeg", b = "PNG!";
  const std::string bytes = u32(static_cast<std::uint32_t>(a.size())) + a + u32(static_cast<std::uint32_t>(b.size())) + b;
  const float f[2] = {0.5f, -1.f};
  const std::string floats(reinterpret_cast<const char*>(f), sizeof f);
  const std::string header = nlohmann::json{
      {"inputs",
       {{{"name", "image"}, {"datatype", "BYTES"}, {"shape", {2}}, {"parameters", {{"binary_data_size", bytes.size()}}}},
        {{"name", "input"}, {"datatype", "FP32"}, {"shape", {1, 2}}, {"parameters", {{"binary_data_size", floats.size()}}}}}}}
                                 .dump();
  const InferRequest r = parse_infer_request(header + bytes + floats, header.size());
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].bytes, (std::vector<std::string>{a, b}));
  EXPECT_EQ(r.inputs[1].fp32, (std::vector<float>{0.5f, -1.f}));
  expect_refused(header + bytes + floats + "x", "no input claims", header.size());
  expect_refused(header + bytes, "exceeds the binary data", header.size());
  expect_refused(header + bytes + floats, "exceeds the body", header.size() + bytes.size() + floats.size() + 1);
}

TEST(ServeProtocol, MalformedRequestsAreRefused) {
  expect_refused("", "not JSON");
  expect_refused("{\"inputs\":", "not JSON");
  expect_refused("[]", "JSON object");
  expect_refused("{}", "no inputs");
  expect_refused(R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})", "no name");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1],"data":[1]}]})", "not accepted");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2],"data":[1]}]})", "shape needs 2");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1,2]}]})", "more data than its shape");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[-1],"data":[]}]})", "negative");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1.5],"data":[1]}]})", "not a size");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":["a"]}]})", "FP32 data holds");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1099511627776,1099511627776],"data":[]}]})", "more than");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[7]}]})", "must be strings");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[{"b64":"@@"}]}]})", "not base64");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1]}]})", "neither data");
  expect_refused(R"({"parameters":{"top_k":0},"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]})", "top_k");
  expect_refused(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],"outputs":{}})", "outputs must be a list");
  const std::string h = R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":6}}]})";
  expect_refused(h + u32(9) + "ab", "ends inside an element", h.size());
  const std::string h2 = R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":2}}]})";
  expect_refused(h2 + std::string("\x01\x00", 2), "ends inside an element's length", h2.size());
}

TEST(ServeProtocol, Base64) {
  EXPECT_EQ(base64_decode("aGVsbG8="), "hello");
  EXPECT_EQ(base64_decode("aGVsbG8"), "hello");
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_FALSE(base64_decode("a"));
  EXPECT_FALSE(base64_decode("a b="));
  const InferRequest r =
      parse_infer_request(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[2],"data":[{"b64":"/9j/"},"raw"]}]})", std::nullopt);
  EXPECT_EQ(r.inputs[0].bytes, (std::vector<std::string>{"\xff\xd8\xff", "raw"}));
}

TEST(ServeProtocol, ResponseJsonAndBinary) {
  Tensor logits{"logits", "FP32", {1, 2}, {}, {0.25f, 2.f}, {}};
  Tensor idx{"topk_indices", "INT64", {1, 1}, {}, {}, {1}};
  Tensor labels{"topk_labels", "BYTES", {1, 1}, {"tabby cat"}, {}, {}};
  InferRequest all_json;
  all_json.id = "r";
  Response r = make_infer_response("m", "1", all_json, {logits, idx, labels});
  EXPECT_FALSE(r.json_length);
  const nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["model_name"], "m");
  EXPECT_EQ(j["id"], "r");
  ASSERT_EQ(j["outputs"].size(), 3u);
  EXPECT_EQ(j["outputs"][0]["data"], nlohmann::json({0.25, 2.0}));
  EXPECT_EQ(j["outputs"][1]["data"], nlohmann::json({1}));
  EXPECT_EQ(j["outputs"][2]["data"], nlohmann::json({"tabby cat"}));
  // Asked for one output, in binary: only it, its bytes after the JSON.
  InferRequest one;
  one.outputs.push_back({"topk_labels", true});
  r = make_infer_response("m", "1", one, {logits, idx, labels});
  ASSERT_TRUE(r.json_length);
  const nlohmann::json h = nlohmann::json::parse(r.body.substr(0, *r.json_length));
  ASSERT_EQ(h["outputs"].size(), 1u);
  EXPECT_EQ(h["outputs"][0]["parameters"]["binary_data_size"], 13);
  EXPECT_EQ(r.body.substr(*r.json_length), u32(9) + "tabby cat");
}

}  // namespace
}  // namespace vinfer::serve
