#pragma once
// IEEE 754 binary16 (fp16) and bfloat16 (bf16) from and to float, as bit patterns:
// rounding to nearest, ties to even; subnormals, infinities and NaN kept (a NaN stays a
// quiet NaN). The GEMM check stores its inputs with these and computes its CPU reference
// from exactly the values they round to.
#include <bit>
#include <cstdint>

namespace cudoctor::util {

// float -> fp16; a value past 65504 (after rounding) becomes infinity.
constexpr std::uint16_t to_fp16(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to infinity
  std::uint32_t h = 0;
  std::uint32_t rest = 0, half = 0;
  if (abs >= 0x38800000u) {
    // Normal in fp16 (>= 2^-14): rebias the exponent (127 - 15 = 112) and drop 13 bits.
    const std::uint32_t rebiased = abs - (112u << 23);
    h = rebiased >> 13;
    rest = rebiased & 0x1fffu;
    half = 0x1000u;
  } else if (abs >= 0x33000000u) {
    // Subnormal in fp16: the significand with its implicit bit, in units of 2^-24.
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14 .. 24
    h = mant >> shift;
    rest = mant & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  }
  // A carry out of the significand moves to the next exponent, which is the right answer.
  if (rest > half || (rest == half && half != 0 && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

// fp16 -> float, exactly (every fp16 value is a float).
constexpr float from_fp16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // infinity, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal: normalise, one exponent step per shift (113 is 2^-14 biased for float).
  std::uint32_t float_exp = 113;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --float_exp;
  }
  return std::bit_cast<float>(sign | (float_exp << 23) | ((mant & 0x3ffu) << 13));
}

// float -> bf16 (the top 16 bits of the float, rounded).
constexpr std::uint16_t to_bf16(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

// bf16 -> float, exactly.
constexpr float from_bf16(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

}  // namespace cudoctor::util
