#include "serve/protocol.hpp"

#include <cstring>

#include <nlohmann/json.hpp>

namespace vinfer::serve {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw RequestError(400, what); }

std::int64_t product(const std::vector<std::int64_t>& shape, std::int64_t limit, const std::string& name) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) bad("input '" + name + "': negative dimension in its shape");
    if (d > 0 && n > limit / d) bad("input '" + name + "': shape holds more than " + std::to_string(limit) + " elements");
    n *= d;
  }
  return n;
}

// Row-major data as JSON: flat, or nested arrays (flattened here).
void flatten(const json& data, std::vector<const json*>& out, std::int64_t limit, const std::string& name) {
  std::vector<const json*> todo{&data};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (!j->is_array()) {
      if (static_cast<std::int64_t>(out.size()) >= limit) bad("input '" + name + "': more data than its shape holds");
      out.push_back(j);
      continue;
    }
    for (auto it = j->rbegin(); it != j->rend(); ++it) todo.push_back(&*it);
  }
}

std::uint32_t read_u32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts only (x86-64)
  return v;
}

void read_bytes_elements(Tensor& t, std::string_view data, std::int64_t count) {
  std::size_t at = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (data.size() - at < 4) bad("input '" + t.name + "': its binary data ends inside an element's length");
    const std::uint32_t len = read_u32(data.data() + at);
    at += 4;
    if (data.size() - at < len) bad("input '" + t.name + "': its binary data ends inside an element");
    t.bytes.emplace_back(data.substr(at, len));
    at += len;
  }
  if (at != data.size()) bad("input '" + t.name + "': binary data holds more than " + std::to_string(count) + " element(s)");
}

Tensor parse_input(const json& in, std::string_view& binary, bool& any_binary, const RequestLimits& limits) {
  if (!in.is_object()) bad("each input must be an object");
  Tensor t;
  const auto name = in.find("name");
  if (name == in.end() || !name->is_string()) bad("an input has no name");
  t.name = name->get<std::string>();
  const auto dt = in.find("datatype");
  if (dt == in.end() || !dt->is_string()) bad("input '" + t.name + "' has no datatype");
  t.datatype = dt->get<std::string>();
  if (t.datatype != "BYTES" && t.datatype != "FP32")
    bad("input '" + t.name + "': datatype " + t.datatype + " is not accepted (BYTES: encoded images; FP32: preprocessed tensors)");
  const auto shape = in.find("shape");
  if (shape == in.end() || !shape->is_array()) bad("input '" + t.name + "' has no shape");
  for (const json& d : *shape) {
    if (!d.is_number_integer()) bad("input '" + t.name + "': its shape holds " + d.dump() + ", not a size");
    t.shape.push_back(d.get<std::int64_t>());
  }
  const std::int64_t limit = t.datatype == "BYTES" ? limits.max_bytes_elements : limits.max_elements;
  const std::int64_t count = product(t.shape, limit, t.name);
  std::optional<std::uint64_t> binary_size;
  if (const auto p = in.find("parameters"); p != in.end()) {
    if (!p->is_object()) bad("input '" + t.name + "': parameters must be an object");
    if (const auto b = p->find("binary_data_size"); b != p->end()) {
      if (!b->is_number_unsigned()) bad("input '" + t.name + "': binary_data_size must be a size");
      binary_size = b->get<std::uint64_t>();
    }
  }
  const auto data = in.find("data");
  if (binary_size) {
    if (data != in.end()) bad("input '" + t.name + "' has both data and binary_data_size");
    if (*binary_size > binary.size()) bad("input '" + t.name + "': binary_data_size exceeds the binary data sent");
    const std::string_view mine = binary.substr(0, static_cast<std::size_t>(*binary_size));
    binary.remove_prefix(static_cast<std::size_t>(*binary_size));
    any_binary = true;
    if (t.datatype == "BYTES") {
      read_bytes_elements(t, mine, count);
    } else {
      if (mine.size() != static_cast<std::uint64_t>(count) * 4)
        bad("input '" + t.name + "': " + std::to_string(mine.size()) + " bytes of binary data, its shape needs " +
            std::to_string(count * 4));
      t.fp32.resize(static_cast<std::size_t>(count));
      if (count > 0) std::memcpy(t.fp32.data(), mine.data(), mine.size());
    }
    return t;
  }
  if (data == in.end()) bad("input '" + t.name + "' has neither data nor binary_data_size");
  std::vector<const json*> items;
  flatten(*data, items, count, t.name);
  if (static_cast<std::int64_t>(items.size()) != count)
    bad("input '" + t.name + "': " + std::to_string(items.size()) + " element(s) of data, its shape needs " + std::to_string(count));
  for (const json* j : items) {
    if (t.datatype == "FP32") {
      if (!j->is_number()) bad("input '" + t.name + "': FP32 data holds " + j->dump().substr(0, 40));
      t.fp32.push_back(j->get<float>());
    } else if (j->is_string()) {
      t.bytes.push_back(j->get<std::string>());
    } else if (j->is_object() && j->size() == 1 && j->contains("b64") && j->at("b64").is_string()) {
      auto decoded = base64_decode(j->at("b64").get<std::string>());
      if (!decoded) bad("input '" + t.name + "': an element's b64 is not base64");
      t.bytes.push_back(std::move(*decoded));
    } else {
      bad("input '" + t.name + "': BYTES data must be strings (or {\"b64\": ...})");
    }
  }
  return t;
}

}  // namespace

std::int64_t Tensor::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

InferRequest parse_infer_request(std::string_view body, std::optional<std::size_t> header_length, const RequestLimits& limits) {
  const std::size_t json_size = header_length ? *header_length : body.size();
  if (json_size > body.size()) bad("Inference-Header-Content-Length exceeds the body");
  std::string_view binary = body.substr(json_size);
  json j;
  try {
    j = json::parse(body.substr(0, json_size));
  } catch (const json::exception& e) {
    bad(std::string("the request is not JSON: ") + e.what());
  }
  if (!j.is_object()) bad("the request must be a JSON object");
  InferRequest r;
  try {
    if (const auto id = j.find("id"); id != j.end()) {
      if (!id->is_string()) bad("id must be a string");
      r.id = id->get<std::string>();
    }
    if (const auto p = j.find("parameters"); p != j.end()) {
      if (!p->is_object()) bad("parameters must be an object");
      if (const auto b = p->find("binary_data_output"); b != p->end()) {
        if (!b->is_boolean()) bad("binary_data_output must be true or false");
        r.binary_outputs = b->get<bool>();
      }
      if (const auto k = p->find("top_k"); k != p->end()) {
        if (!k->is_number_integer() || k->get<std::int64_t>() < 1 || k->get<std::int64_t>() > limits.max_top_k)
          bad("top_k must be an integer from 1 to " + std::to_string(limits.max_top_k));
        r.top_k = k->get<int>();
      }
    }
    const auto inputs = j.find("inputs");
    if (inputs == j.end() || !inputs->is_array() || inputs->empty()) bad("the request has no inputs");
    bool any_binary = false;
    for (const json& in : *inputs) r.inputs.push_back(parse_input(in, binary, any_binary, limits));
    if (!binary.empty()) bad(std::to_string(binary.size()) + " bytes of binary data that no input claims");
    if (const auto outs = j.find("outputs"); outs != j.end()) {
      if (!outs->is_array()) bad("outputs must be a list");
      for (const json& o : *outs) {
        if (!o.is_object() || !o.contains("name") || !o.at("name").is_string()) bad("each requested output needs a name");
        RequestedOutput ro{o.at("name").get<std::string>(), r.binary_outputs};
        if (const auto p = o.find("parameters"); p != o.end() && p->is_object())
          if (const auto b = p->find("binary_data"); b != p->end() && b->is_boolean()) ro.binary = b->get<bool>();
        r.outputs.push_back(std::move(ro));
      }
    }
  } catch (const json::exception& e) {
    bad(std::string("malformed request: ") + e.what());
  }
  return r;
}

Response make_infer_response(const std::string& model, const std::string& version, const InferRequest& request,
                             const std::vector<Tensor>& outputs) {
  json j{{"model_name", model}, {"model_version", version}, {"outputs", json::array()}};
  if (!request.id.empty()) j["id"] = request.id;
  std::string binary;
  for (const Tensor& t : outputs) {
    bool as_binary = request.binary_outputs;
    if (!request.outputs.empty()) {
      const RequestedOutput* asked = nullptr;
      for (const RequestedOutput& o : request.outputs)
        if (o.name == t.name) asked = &o;
      if (!asked) continue;
      as_binary = asked->binary;
    }
    json o{{"name", t.name}, {"datatype", t.datatype}, {"shape", t.shape}};
    if (as_binary) {
      const std::size_t before = binary.size();
      if (t.datatype == "FP32") {
        binary.append(reinterpret_cast<const char*>(t.fp32.data()), t.fp32.size() * 4);
      } else if (t.datatype == "INT64") {
        binary.append(reinterpret_cast<const char*>(t.int64.data()), t.int64.size() * 8);
      } else {
        for (const std::string& s : t.bytes) {
          const auto n = static_cast<std::uint32_t>(s.size());
          binary.append(reinterpret_cast<const char*>(&n), 4);
          binary += s;
        }
      }
      o["parameters"] = {{"binary_data_size", binary.size() - before}};
    } else if (t.datatype == "FP32") {
      o["data"] = t.fp32;
    } else if (t.datatype == "INT64") {
      o["data"] = t.int64;
    } else {
      o["data"] = t.bytes;
    }
    j["outputs"].push_back(std::move(o));
  }
  Response r;
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!binary.empty()) {
    r.json_length = r.body.size();
    r.body += binary;
  }
  return r;
}

std::string error_body(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace vinfer::serve
