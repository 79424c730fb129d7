// Scalar and vector data types of the IR.
#pragma once

#include <cstdint>
#include <string>

namespace tuner::te {

/// A data type: code, bits per element and vector lanes (1 for scalars).
struct DataType {
  enum Code : uint8_t { Int, UInt, Float, Bool, Handle };
  Code code = Float;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

  static constexpr DataType f32() { return {Float, 32}; }
  static constexpr DataType f16() { return {Float, 16}; }
  static constexpr DataType i64() { return {Int, 64}; }
  static constexpr DataType i32() { return {Int, 32}; }
  static constexpr DataType i8() { return {Int, 8}; }
  static constexpr DataType u8() { return {UInt, 8}; }
  static constexpr DataType boolean() { return {Bool, 1}; }

  bool is_float() const { return code == Float; }
  bool is_int() const { return code == Int; }
  bool is_uint() const { return code == UInt; }
  bool is_bool() const { return code == Bool; }
  /// Int or UInt (bool excluded).
  bool is_integer() const { return code == Int || code == UInt; }
  bool is_scalar() const { return lanes == 1; }
  bool is_vector() const { return lanes > 1; }
  /// Bytes per element in memory (bool is stored as one byte).
  int bytes() const { return code == Bool ? 1 : bits / 8; }
  DataType with_lanes(int l) const { return {code, bits, l}; }
  DataType element() const { return with_lanes(1); }

  bool operator==(const DataType&) const = default;

  /// "float32", "int64", "bool", "float32x16".
  std::string str() const;
  /// Parses "float32", "int8", ...; throws UserError naming the string when unknown.
  static DataType parse(const std::string& s);
};

}  // namespace tuner::te
