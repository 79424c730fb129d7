// Two error channels (STYLE.md): a user mistake becomes one clear message and a non-zero
// exit; a broken invariant is a compiler bug and says so. Messages are built only on failure.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tuner {

/// A mistake in the user's input: bad shape, unknown op, bad target string, ... Its message
/// quotes users' and clients' strings, so control characters but newlines and tabs are escaped here
/// (escape_controls): a NUL would cut what() short, an escape sequence reach a terminal.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message);
  explicit UserError(const char* message) : UserError(std::string(message)) {}
};

/// A failure of this machine rather than of the work (a full disk, a folder deleted under a
/// running tuner): a build or measurement that meets it is not the candidate's fault, so it
/// ends the run instead of being recorded against the candidate.
class HostError : public UserError {
 public:
  using UserError::UserError;
};

/// A violated internal invariant: a bug in Tuner. Its message may quote a model's names too,
/// so it is escaped like UserError's.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message);
  explicit InternalError(const char* message) : InternalError(std::string(message)) {}
};

namespace detail {
// Collects the streamed message and throws E from its destructor-free `raise` path.
template <class E>
class ErrorBuilder {
 public:
  ErrorBuilder(const char* prefix) { if (prefix) os_ << prefix; }
  template <class T>
  ErrorBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] void raise() const { throw E(os_.str()); }

 private:
  std::ostringstream os_;
};
// `Voidify() & builder` lets the macro be a single expression whose message is lazily built.
struct Raise {
  template <class E>
  [[noreturn]] void operator&(const ErrorBuilder<E>& b) const { b.raise(); }
};
std::string internal_prefix(const char* file, int line, const char* cond);
}  // namespace detail

}  // namespace tuner

// Each macro is one expression (`cond ? (void)0 : raise`): safe as the body of an unbraced
// if/else without a dangling-else warning, and the message is built only on failure.

/// Fails with a UserError carrying the streamed message when `cond` is false.
#define USER_CHECK(cond) \
  (cond) ? (void)0       \
         : ::tuner::detail::Raise() & ::tuner::detail::ErrorBuilder<::tuner::UserError>(nullptr)

/// Unconditionally fails with a UserError carrying the streamed message.
#define USER_ERROR() ::tuner::detail::Raise() & ::tuner::detail::ErrorBuilder<::tuner::UserError>(nullptr)

/// Fails with a HostError carrying the streamed message when `cond` is false.
#define HOST_CHECK(cond) \
  (cond) ? (void)0       \
         : ::tuner::detail::Raise() & ::tuner::detail::ErrorBuilder<::tuner::HostError>(nullptr)

/// Unconditionally fails with a HostError carrying the streamed message.
#define HOST_ERROR() ::tuner::detail::Raise() & ::tuner::detail::ErrorBuilder<::tuner::HostError>(nullptr)

/// Fails with an InternalError (a Tuner bug) when `cond` is false.
#define INTERNAL_CHECK(cond)                                                             \
  (cond) ? (void)0                                                                       \
         : ::tuner::detail::Raise() & ::tuner::detail::ErrorBuilder<::tuner::InternalError>( \
               ::tuner::detail::internal_prefix(__FILE__, __LINE__, #cond).c_str())
