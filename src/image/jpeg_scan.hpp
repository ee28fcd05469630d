// Internal: vinfer's own decoder for the common JPEG layout, a baseline
// (sequential Huffman, 8-bit) frame whose one scan holds every component:
// gray, or YCbCr with 1x1 chroma. It exists to split the entropy decoding,
// which libjpeg does on one thread, across two: the second thread starts
// in the middle of the data without knowing where it stands and decodes
// speculatively; the first decodes from the start until it lands on a
// block boundary the second also found (Huffman codes resynchronize within
// a few blocks), and from there the second thread's blocks are the true
// ones, their DC values shifted by a constant the first thread knows. With
// restart markers the intervals are split instead. Then both threads
// inverse-transform (jpeg_idct.hpp) half of the rows each.
//
// The pixels equal libjpeg-turbo's for every file it accepts (tests compare
// them); anything outside the layout, a bad Huffman code, a coefficient run
// past a block's end, data that ends early or a marker other than EOI where
// the scan ends makes it return false, and the caller decodes the file with
// libjpeg instead, which then reports or tolerates it as it always does.
//
// jpeg_scan.cpp is compiled for AVX2 + BMI2: call nothing here unless
// cpu_features().avx2.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace vinfer::detail {

struct JpegHuffSpec {
  std::uint8_t counts[17] = {};  // counts[l]: codes of length l (1..16)
  std::uint8_t symbols[256] = {};
};

struct JpegScanDesc {
  int width = 0, height = 0;  // the image
  int components = 0;         // 1 (gray) or 3 (YCbCr), all in the one scan, in scan order
  int h[3] = {}, v[3] = {};   // sampling factors
  // Samples per block side after DCT scaling (8, 4, 2 or 1), or 0 for a
  // component that is decoded but not wanted (the chroma of a luma-only decode).
  int block_size[3] = {};
  std::uint16_t quant[3][64] = {};  // natural order
  JpegHuffSpec dc[3], ac[3];
  int restart_interval = 0;
  const std::uint8_t* data = nullptr;  // the first byte after the SOS header
  std::size_t size = 0;                // bytes from there to the end of the file
};

// The decoded planes, one per wanted component, each `stride` bytes per row,
// rows of MCU-padded length; rows [y0, y1) of the output are final.
struct JpegPlanes {
  const std::uint8_t* plane[3] = {};
  std::size_t stride[3] = {};
};
using JpegRowSink = std::function<void(const JpegPlanes& planes, int y0, int y1)>;

// Decodes the scan; `out_height` is the output's rows (libjpeg's
// output_height). The sink is called from up to `threads` threads at once,
// for disjoint row ranges covering [0, out_height). Returns false (having
// called the sink on nothing or on some rows) when libjpeg should decode
// the file instead.
bool decode_jpeg_scan(const JpegScanDesc& desc, int out_height, int threads, const JpegRowSink& sink);

// Counts since the process started, for tests: scans decoded here; of
// those, scans whose second half came from the speculative thread after a
// sync, and scans split at a restart marker.
struct JpegScanCounts {
  long decoded = 0, speculative = 0, restart_split = 0;
};
JpegScanCounts jpeg_scan_counts();

}  // namespace vinfer::detail
