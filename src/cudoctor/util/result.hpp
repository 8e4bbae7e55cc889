#pragma once
// Result<T>: a value or a user-grade error message, shaped like std::expected (which g++ 12
// lacks). Errors are for what the world does wrong; bugs are asserts.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cudoctor::util {

struct Error {
  std::string message;  // complete sentence fragment a user can read, with its evidence
};

inline Error error(std::string message) {
  return Error{std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
  Result(Error e) : m_v(std::in_place_index<1>, std::move(e)) {}

  bool ok() const { return m_v.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(m_v);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(m_v);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(m_v));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const std::string& error() const {
    assert(!ok());
    return std::get<1>(m_v).message;
  }
  T value_or(T fallback) const { return ok() ? std::get<0>(m_v) : std::move(fallback); }

 private:
  std::variant<T, Error> m_v;
};

}  // namespace cudoctor::util
