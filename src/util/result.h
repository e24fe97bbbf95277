// Expected failures as values: a Result<T> holds either a T or an Error whose message already
// names what failed and on what input (file, field, value, what would be valid).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace fp {

struct Error {
  std::string message;
  int status = 0;  // what the other side answered, where the failure is such an answer (an HTTP status); 0: none
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}       // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

inline Error make_error(std::string message) { return Error{std::move(message)}; }

// An error at a place in an input (a file and its field path): "where: what".
inline Error error_at(const std::string& where, const std::string& what) { return make_error(where + ": " + what); }

}  // namespace fp

// Passes an Error up to the caller: FP_TRY(auto x, load()); or FP_TRY_STATUS(check()).
#define FP_CONCAT_INNER(a, b) a##b
#define FP_CONCAT(a, b) FP_CONCAT_INNER(a, b)
#define FP_TRY(decl, expr)                                   \
  auto FP_CONCAT(fp_try_, __LINE__) = (expr);                \
  if (!FP_CONCAT(fp_try_, __LINE__)) return FP_CONCAT(fp_try_, __LINE__).error(); \
  decl = std::move(FP_CONCAT(fp_try_, __LINE__)).value()
#define FP_TRY_STATUS(expr)                                  \
  do {                                                       \
    auto fp_try_status_ = (expr);                            \
    if (!fp_try_status_) return fp_try_status_.error();      \
  } while (0)
