// GGUF reader: round trips through an in-memory writer, every truncation
// point, hostile lengths and types, tensor placement checks, and open().
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "nextok/error.hpp"
#include "nextok/gguf.hpp"

namespace nextok {
namespace {

using test::ByteBuf;
using test::GgufWriter;

std::vector<std::byte> filled(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xFF);
  return v;
}

// A valid image that uses every value type and a few tensors.
std::vector<std::byte> sample_image(uint32_t version = 3) {
  GgufWriter w(version);
  w.string("general.architecture", "llama")
      .scalar("t.u8", GgufType::kU8, uint8_t{200})
      .scalar("t.i8", GgufType::kI8, int8_t{-100})
      .scalar("t.u16", GgufType::kU16, uint16_t{60000})
      .scalar("t.i16", GgufType::kI16, int16_t{-30000})
      .scalar("t.u32", GgufType::kU32, uint32_t{4000000000u})
      .scalar("t.i32", GgufType::kI32, int32_t{-2000000000})
      .scalar("t.u64", GgufType::kU64, uint64_t{1} << 40)
      .scalar("t.i64", GgufType::kI64, int64_t{-(int64_t{1} << 50)})
      .scalar("t.f32", GgufType::kF32, 0.5f)
      .scalar("t.f64", GgufType::kF64, 1e100)
      .scalar("t.bool", GgufType::kBool, uint8_t{1})
      .string("tokenizer.chat_template", "{{ bos }}héllo ✓")
      .string_array("tokenizer.ggml.tokens",
                    {"<s>", "</s>", "héllo", "", "日本", "\xF0\x9F\x98\x80"})
      .array("tokenizer.ggml.token_type", GgufType::kI32, std::vector<int32_t>{3, 3, 1, 1, 1, 1})
      .array("tokenizer.ggml.scores", GgufType::kF32,
             std::vector<float>{0.f, -1.5f, -2.25f, 3.f, -INFINITY, 1e-30f})
      .array("t.f64s", GgufType::kF64, std::vector<double>{1.5, -2.5})
      .array("t.u64s", GgufType::kU64, std::vector<uint64_t>{0, uint64_t{1} << 62})
      .array("t.empty", GgufType::kU32, std::vector<uint32_t>{})
      .tensor("token_embd.weight", 0, {4, 3}, filled(48, 1))
      .tensor("blk.0.attn_q.weight", 2, {64, 2}, filled(2 * 2 * 18, 2))  // Q4_0
      .tensor("output_norm.weight", 30, {5}, filled(10, 3));             // BF16
  return w.build();
}

GgufFile parse(const std::vector<std::byte>& b) {
  return GgufFile::from_memory(b, "test.gguf");
}

// Parses `b` and returns the kMalformedFile message; fails the test otherwise.
std::string malformed(const std::vector<std::byte>& b) {
  try {
    (void)parse(b);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected kMalformedFile";
  return {};
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(GgufReader, RoundTripScalarsStringsArrays) {
  const auto b = sample_image();
  const GgufFile f = parse(b);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("t.u8"), 200);
  EXPECT_EQ(f.get_int("t.i8"), -100);
  EXPECT_EQ(f.get_int("t.u16"), 60000);
  EXPECT_EQ(f.get_int("t.i16"), -30000);
  EXPECT_EQ(f.get_int("t.u32"), 4000000000LL);
  EXPECT_EQ(f.get_int("t.i32"), -2000000000);
  EXPECT_EQ(f.get_int("t.u64"), int64_t{1} << 40);
  EXPECT_EQ(f.get_int("t.i64"), -(int64_t{1} << 50));
  EXPECT_EQ(f.get_float("t.f32"), 0.5);
  EXPECT_EQ(f.get_float("t.f64"), 1e100);
  EXPECT_EQ(f.get_float("t.i32"), -2e9);
  EXPECT_EQ(f.get_bool("t.bool"), true);
  EXPECT_EQ(f.get_string("tokenizer.chat_template"), "{{ bos }}héllo ✓");

  const auto toks = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(toks);
  const std::vector<std::string_view> want = {"<s>", "</s>", "héllo",
                                              "",    "日本", "\xF0\x9F\x98\x80"};
  EXPECT_EQ(*toks, want);
  EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type"), (std::vector<int64_t>{3, 3, 1, 1, 1, 1}));
  const auto scores = f.get_float_array("tokenizer.ggml.scores");
  ASSERT_TRUE(scores);
  EXPECT_EQ(scores->size(), 6u);
  EXPECT_EQ((*scores)[2], -2.25f);
  EXPECT_TRUE(std::isinf((*scores)[4]));
  EXPECT_EQ(f.get_float_array("t.f64s"), (std::vector<float>{1.5f, -2.5f}));
  EXPECT_EQ(f.get_int_array("t.u64s"), (std::vector<int64_t>{0, int64_t{1} << 62}));
  EXPECT_EQ(f.get_int_array("t.empty"), std::vector<int64_t>{});

  const auto keys = f.keys();
  ASSERT_EQ(keys.size(), 19u);
  EXPECT_EQ(keys.front(), "general.architecture");
  EXPECT_EQ(keys.back(), "t.empty");
  EXPECT_TRUE(f.has("t.u8"));
  EXPECT_FALSE(f.has("t.nope"));
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->count, 6u);
}

TEST(GgufReader, MissingKeysAndTypeMismatches) {
  const auto b = sample_image();
  const GgufFile f = parse(b);
  EXPECT_FALSE(f.get_string("missing"));
  EXPECT_FALSE(f.get_int("missing"));
  EXPECT_FALSE(f.get_float("missing"));
  EXPECT_FALSE(f.get_bool("missing"));
  EXPECT_FALSE(f.get_string_array("missing"));
  EXPECT_FALSE(f.get_int_array("missing"));
  EXPECT_FALSE(f.get_float_array("missing"));
  const auto expect_type_error = [](auto&& fn, const char* needle) {
    try {
      fn();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kMalformedFile);
      EXPECT_HAS(e.what(), needle);
    }
  };
  expect_type_error([&] { (void)f.get_string("t.u8"); }, "'t.u8' is u8, expected string");
  expect_type_error([&] { (void)f.get_int("t.f32"); }, "is f32, expected an integer");
  expect_type_error([&] { (void)f.get_int("t.bool"); }, "is bool, expected an integer");
  expect_type_error([&] { (void)f.get_bool("t.u8"); }, "expected bool");
  expect_type_error([&] { (void)f.get_float("general.architecture"); }, "expected a number");
  expect_type_error([&] { (void)f.get_string_array("tokenizer.ggml.scores"); },
                    "is array of f32, expected array of string");
  expect_type_error([&] { (void)f.get_int_array("tokenizer.ggml.scores"); },
                    "expected array of integers");
  expect_type_error([&] { (void)f.get_float_array("tokenizer.ggml.tokens"); },
                    "expected array of numbers");
  expect_type_error([&] { (void)f.get_int_array("t.u8"); }, "is u8, expected array of integers");
}

TEST(GgufReader, U64AboveInt64MaxIsReported) {
  GgufWriter w;
  w.scalar("big", GgufType::kU64, ~uint64_t{0});
  w.array("bigs", GgufType::kU64, std::vector<uint64_t>{1, ~uint64_t{0}});
  const auto b = w.build();
  const GgufFile f = parse(b);
  EXPECT_THROW((void)f.get_int("big"), Error);
  EXPECT_THROW((void)f.get_int_array("bigs"), Error);
  EXPECT_EQ(f.get_float("big"), 18446744073709551615.0);
}

TEST(GgufReader, TensorInfosAndData) {
  const auto b = sample_image();
  const GgufFile f = parse(b);
  ASSERT_EQ(f.tensors().size(), 3u);
  const GgufTensorInfo* e = f.find_tensor("token_embd.weight");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, 0u);
  EXPECT_EQ(e->n_dims, 2u);
  EXPECT_EQ(e->dims[0], 4u);
  EXPECT_EQ(e->dims[1], 3u);
  EXPECT_EQ(e->dims[2], 1u);
  EXPECT_EQ(e->n_elements, 12u);
  EXPECT_EQ(e->n_bytes, 48u);
  EXPECT_EQ(e->offset, 0u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  EXPECT_EQ(e->file_offset, f.data_offset());
  const auto d = f.tensor_data(*e);
  EXPECT_EQ(d.size(), 48u);
  EXPECT_EQ(std::vector<std::byte>(d.begin(), d.end()), filled(48, 1));

  const GgufTensorInfo* q = f.find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->n_bytes, 72u);
  EXPECT_EQ(q->offset, 64u);  // 48 rounded up to 32
  const auto qd = f.tensor_data(*q);
  EXPECT_EQ(std::vector<std::byte>(qd.begin(), qd.end()), filled(72, 2));
  const GgufTensorInfo* n = f.find_tensor("output_norm.weight");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->n_bytes, 10u);
  EXPECT_EQ(n->data, b.data() + f.data_offset() + 160);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(GgufReader, VersionTwoAndCustomAlignment) {
  GgufWriter w(2);
  w.alignment(64)
      .string("a", "b")
      .tensor("x", 0, {3}, filled(12, 0))
      .tensor("y", 0, {1}, filled(4, 9));
  const auto b = w.build();
  const GgufFile f = parse(b);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.find_tensor("y")->offset, 64u);
}

TEST(GgufReader, EmptyFileHeaderOnly) {
  const auto b = GgufWriter().build();
  const GgufFile f = parse(b);
  EXPECT_TRUE(f.keys().empty());
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufReader, EveryTruncationIsMalformed) {
  for (const auto& b : {sample_image(3), sample_image(2)}) {
    ASSERT_NO_THROW((void)parse(b));
    for (size_t n = 0; n < b.size(); ++n) {
      // An exact-size heap copy, so sanitizers see any read past the end.
      const std::vector<std::byte> prefix(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      try {
        (void)parse(prefix);
        ADD_FAILURE() << "prefix of " << n << " bytes parsed";
      } catch (const Error& e) {
        ASSERT_EQ(e.code(), ErrorCode::kMalformedFile) << n << ": " << e.what();
        EXPECT_HAS(e.what(), "test.gguf: ");
        EXPECT_HAS(e.what(), "at offset ");
      }
    }
  }
}

TEST(GgufReader, BadMagicAndVersions) {
  EXPECT_HAS(malformed({}), "too short for the 'GGUF' magic");
  ByteBuf m;
  m.raw("GGML").u32(3).u64(0).u64(0);
  EXPECT_HAS(malformed(m.bytes()), "the magic is 'GGML', expected 'GGUF'");
  for (const auto& [v, needle] :
       std::vector<std::pair<uint32_t, std::string>>{{1, "GGUF version 1 is not supported"},
                                                     {0, "unsupported GGUF version 0"},
                                                     {4, "unsupported GGUF version 4"},
                                                     {0x03000000, "big-endian GGUF"}}) {
    ByteBuf b;
    b.raw("GGUF").u32(v).u64(0).u64(0);
    const std::string msg = malformed(b.bytes());
    EXPECT_HAS(msg, needle);
    EXPECT_HAS(msg, "at offset 4");
  }
}

TEST(GgufReader, HugeCounts) {
  ByteBuf kv;
  kv.raw("GGUF").u32(3).u64(0).u64(~uint64_t{0});
  EXPECT_HAS(malformed(kv.bytes()), "metadata key count 18446744073709551615 exceeds the limit");
  ByteBuf kv2;
  kv2.raw("GGUF").u32(3).u64(0).u64(1000).str("k").type(GgufType::kU8).u8(1);
  EXPECT_HAS(malformed(kv2.bytes()), "metadata key count 1000 cannot fit");
  ByteBuf t;
  t.raw("GGUF").u32(3).u64(uint64_t{1} << 40).u64(0);
  EXPECT_HAS(malformed(t.bytes()), "tensor count 1099511627776 exceeds the limit");
}

TEST(GgufReader, HugeStringLengths) {
  ByteBuf key;
  key.raw("GGUF").u32(3).u64(0).u64(1).u64(0xFFFFFFFFFFull).raw("abcdefghijklmnopqrstuvwxyz");
  const std::string m1 = malformed(key.bytes());
  EXPECT_HAS(m1, "metadata key #0: key length 1099511627775 runs past the end of the file");
  EXPECT_HAS(m1, "at offset 24");

  ByteBuf val;
  val.raw("GGUF")
      .u32(3)
      .u64(0)
      .u64(1)
      .str("general.name")
      .type(GgufType::kString)
      .u64(~uint64_t{0});
  EXPECT_HAS(malformed(val.bytes()),
             "metadata key 'general.name': string length 18446744073709551615 runs past the end");

  GgufWriter w;
  w.raw_kv()
      .str("tokenizer.ggml.tokens")
      .type(GgufType::kArray)
      .type(GgufType::kString)
      .u64(4294967295u)
      .str("a")
      .str("b");
  const std::string m2 = malformed(w.build());
  EXPECT_HAS(m2,
             "metadata key 'tokenizer.ggml.tokens': string array length 4294967295 runs past the "
             "end of the file");
  EXPECT_HAS(m2, "at offset 61");  // 24 header + 8+21 key + 4 type + 4 element type

  GgufWriter w2;
  w2.raw_kv()
      .str("tokenizer.ggml.tokens")
      .type(GgufType::kArray)
      .type(GgufType::kString)
      .u64(2)
      .str("a")
      .u64(1000)
      .raw("xyz");
  EXPECT_HAS(malformed(w2.build()), "string array element 1 of 2: length 1000 runs past the end");

  GgufWriter w3;
  w3.raw_kv().str("k").type(GgufType::kArray).type(GgufType::kI64).u64(~uint64_t{0} / 4);
  EXPECT_HAS(malformed(w3.build()), "i64 array length 4611686018427387903 runs past the end");
  GgufWriter w4;
  w4.raw_kv().str("k").type(GgufType::kArray).type(GgufType::kF32).u64(1000).u32(0);
  EXPECT_HAS(malformed(w4.build()), "f32 array length 1000 (4000 bytes) runs past the end");
}

TEST(GgufReader, BadTypeIds) {
  GgufWriter w;
  w.raw_kv().str("k").u32(13).u32(0);
  EXPECT_HAS(malformed(w.build()), "metadata key 'k': unknown value type 13");
  GgufWriter w2;
  w2.raw_kv().str("k").type(GgufType::kArray).u32(99).u64(0);
  EXPECT_HAS(malformed(w2.build()), "metadata key 'k': unknown array element type 99");
}

TEST(GgufReader, NestedArrays) {
  GgufWriter w;
  w.raw_kv()
      .str("nested")
      .type(GgufType::kArray)
      .type(GgufType::kArray)
      .u64(2)
      .type(GgufType::kU8)
      .u64(2)
      .u8(1)
      .u8(2)
      .type(GgufType::kString)
      .u64(1)
      .str("x");
  const auto b = w.build();
  const GgufFile f = parse(b);
  EXPECT_EQ(f.find("nested")->count, 2u);
  EXPECT_THROW((void)f.get_int_array("nested"), Error);

  GgufWriter deep;
  ByteBuf& kv = deep.raw_kv().str("deep").type(GgufType::kArray);
  for (int i = 0; i < 6; ++i) kv.type(GgufType::kArray).u64(1);
  kv.type(GgufType::kU8).u64(0);
  EXPECT_HAS(malformed(deep.build()), "nested deeper than 4 levels");
}

TEST(GgufReader, DuplicatesAndAlignment) {
  GgufWriter w;
  w.string("a", "1").string("b", "2").string("a", "3");
  EXPECT_HAS(malformed(w.build()), "duplicate metadata key 'a'");
  GgufWriter t;
  t.tensor("x", 0, {1}, filled(4, 0)).tensor("x", 0, {1}, filled(4, 0));
  EXPECT_HAS(malformed(t.build()), "duplicate tensor name 'x'");
  GgufWriter a;
  a.scalar("general.alignment", GgufType::kU32, uint32_t{3});
  EXPECT_HAS(malformed(a.build()), "alignment 3 is not a power of two");
  GgufWriter s;
  s.string("general.alignment", "32");
  EXPECT_HAS(malformed(s.build()), "'general.alignment': must be an unsigned integer, not string");
}

// A one-tensor image with a hand-written tensor info.
std::vector<std::byte> one_tensor(uint32_t n_dims, std::vector<uint64_t> dims, uint32_t type,
                                  uint64_t offset, size_t data_bytes) {
  ByteBuf b;
  b.raw("GGUF").u32(3).u64(1).u64(0).str("w").u32(n_dims);
  for (const uint64_t d : dims) b.u64(d);
  b.u32(type).u64(offset).pad_to(32);
  b.append(filled(data_bytes, 0));
  return std::move(b.bytes());
}

TEST(GgufReader, TensorPlacementAndShapeChecks) {
  EXPECT_NO_THROW((void)parse(one_tensor(2, {4, 2}, 0, 0, 32)));
  const std::string past = malformed(one_tensor(2, {4, 2}, 0, 0, 31));
  EXPECT_HAS(past, "tensor 'w': 32 bytes at data offset 0 run past the end of the file");
  EXPECT_HAS(past, "at offset 57");
  EXPECT_HAS(malformed(one_tensor(1, {1}, 0, 1 << 20, 64)),
             "tensor 'w': data offset 1048576 lies past the end of the file");
  EXPECT_HAS(malformed(one_tensor(1, {1}, 0, 16, 64)),
             "data offset 16 is not a multiple of the alignment 32");
  EXPECT_HAS(malformed(one_tensor(5, {1, 1, 1, 1, 1}, 0, 0, 64)),
             "tensor 'w': has 5 dimensions, at most 4");
  EXPECT_HAS(malformed(one_tensor(2, {uint64_t{1} << 62, 8}, 0, 0, 64)),
             "the element count overflows INT64_MAX at dimension 1");
  EXPECT_HAS(malformed(one_tensor(1, {~uint64_t{0}}, 0, 0, 64)), "above INT64_MAX");
  EXPECT_HAS(malformed(one_tensor(1, {uint64_t{1} << 62}, 28, 0, 64)), "the byte size overflows");
  EXPECT_HAS(malformed(one_tensor(2, {33, 1}, 2, 0, 64)),
             "dimension 0 (33) is not a multiple of the Q4_0 block size 32");

  // Overlap.
  ByteBuf o;
  o.raw("GGUF").u32(3).u64(2).u64(0);
  o.str("a").u32(1).u64(16).u32(0).u64(0);
  o.str("b").u32(1).u64(16).u32(0).u64(32);
  o.pad_to(32).append(filled(96, 0));
  EXPECT_HAS(malformed(o.bytes()),
             "tensors 'a' (data offset 0, 64 bytes) and 'b' (data offset 32, 64 bytes) overlap");
}

TEST(GgufReader, UnknownGgmlTypeIsOnlyAnErrorForData) {
  const auto b = one_tensor(1, {8}, 200, 0, 64);
  const GgufFile f = parse(b);
  const GgufTensorInfo& t = f.tensors()[0];
  EXPECT_FALSE(t.n_bytes);
  EXPECT_NE(t.data, nullptr);
  try {
    (void)f.tensor_data(t);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_HAS(e.what(), "ggml type 200");
  }
}

TEST(GgufReader, OpenFromDisk) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("nextok_gguf_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto b = sample_image();
  {
    std::ofstream out(dir / "ok.gguf", std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    std::ofstream(dir / "empty.gguf", std::ios::binary);
  }
  {
    const GgufFile f = GgufFile::open(dir / "ok.gguf");
    GgufFile moved = f;  // copies share the mapping
    EXPECT_EQ(moved.get_string_array("tokenizer.ggml.tokens")->at(2), "héllo");
    EXPECT_EQ(f.tensor_data(*f.find_tensor("token_embd.weight")).size(), 48u);
  }
  try {
    (void)GgufFile::open(dir / "missing.gguf");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_HAS(e.what(), "missing.gguf");
  }
  try {
    (void)GgufFile::open(dir);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_HAS(e.what(), "not a regular file");
  }
  try {
    (void)GgufFile::open(dir / "empty.gguf");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile);
    EXPECT_HAS(e.what(), "empty.gguf");
  }
  std::filesystem::remove_all(dir);
}

// The element cap is only reachable with a file larger than the cap, so this
// uses a sparse file: the reader skips u8 elements without touching them.
TEST(GgufReader, ArrayElementCapIsReported) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("nextok_gguf_cap_" + std::to_string(::getpid()) + ".gguf");
  GgufWriter w;
  w.raw_kv().str("k").type(GgufType::kArray).type(GgufType::kU8).u64(kGgufMaxArrayElements + 1);
  const auto b = w.build();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  std::filesystem::resize_file(path, b.size() + kGgufMaxArrayElements + 64);
  try {
    (void)GgufFile::open(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile);
    EXPECT_HAS(e.what(), "u8 array length 268435457 exceeds the limit of 268435456 elements");
  }
  std::filesystem::remove(path);
}

TEST(GgufReader, LargeVocabularyParsesQuickly) {
  constexpr size_t kVocab = 262144;
  std::vector<std::string> toks(kVocab), merges(kVocab);
  std::vector<float> scores(kVocab);
  std::vector<int32_t> types(kVocab, 1);
  for (size_t i = 0; i < kVocab; ++i) {
    // Appends, not operator+: GCC 12 warns falsely (-Wrestrict) on "a" + std::string.
    toks[i].append("tok_").append(std::to_string(i * 2654435761u % 1000003));
    merges[i].append("a").append(std::to_string(i)).append(" b");
    scores[i] = -static_cast<float>(i);
  }
  GgufWriter w;
  w.string("tokenizer.ggml.model", "gpt2")
      .string_array("tokenizer.ggml.tokens", toks)
      .array("tokenizer.ggml.scores", GgufType::kF32, scores)
      .array("tokenizer.ggml.token_type", GgufType::kI32, types)
      .string_array("tokenizer.ggml.merges", merges);
  const auto b = w.build();
  const auto t0 = std::chrono::steady_clock::now();
  const GgufFile f = parse(b);
  const auto t1 = std::chrono::steady_clock::now();
  const auto got = f.get_string_array("tokenizer.ggml.tokens");
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_EQ(got->size(), kVocab);
  EXPECT_EQ((*got)[12345], toks[12345]);
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores")->at(777), -777.f);
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "[ timing ] %zu-byte image, 2 x %zu-entry string arrays: parse %.2f ms, "
      "get_string_array %.2f ms\n",
      b.size(), kVocab, ms(t1 - t0), ms(t2 - t1));
  EXPECT_LT(ms(t1 - t0), 1000.0);  // generous: debug and sanitizer builds
}

}  // namespace
}  // namespace nextok
