// ApiError is the error value every layer returns instead of throwing: it maps 1:1 to a
// Kubernetes metav1.Status (code, reason, message, details), so a handler can always
// answer. Result<T> carries either a value or an ApiError.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace shepherd {

struct StatusCause {
  std::string type;     // e.g. FieldValueRequired, FieldValueInvalid
  std::string message;  // human readable
  std::string field;    // JSON path, e.g. metadata.name
};

struct ApiError {
  int code = 500;
  std::string reason;   // metav1.StatusReason: NotFound, AlreadyExists, Conflict, Invalid ...
  std::string message;
  // details
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  std::optional<int> retry_after_seconds;

  static ApiError badRequest(std::string msg) { return make(400, "BadRequest", std::move(msg)); }
  static ApiError notFound(std::string group, std::string resource, std::string name);
  static ApiError alreadyExists(std::string group, std::string resource, std::string name);
  static ApiError conflict(std::string group, std::string resource, std::string name,
                           std::string why);
  static ApiError invalid(std::string group, std::string kind, std::string name,
                          std::vector<StatusCause> causes);
  static ApiError methodNotSupported(std::string group, std::string resource, std::string verb);
  // "<resource[.group]> ["<name>"] is forbidden: <why>" ("forbidden: <why>" without a resource).
  static ApiError forbidden(std::string group, std::string resource, std::string name,
                            std::string why);
  static ApiError internal(std::string msg) { return make(500, "InternalError", std::move(msg)); }
  static ApiError gone(std::string msg) { return make(410, "Expired", std::move(msg)); }
  static ApiError tooLarge(std::string msg) {
    return make(413, "RequestEntityTooLarge", std::move(msg));
  }
  static ApiError unsupportedMediaType(std::string msg) {
    return make(415, "UnsupportedMediaType", std::move(msg));
  }
  static ApiError notAcceptable(std::string msg) {
    return make(406, "NotAcceptable", std::move(msg));
  }
  static ApiError timeout(std::string msg) { return make(504, "Timeout", std::move(msg)); }
  static ApiError unavailable(std::string msg) {
    return make(503, "ServiceUnavailable", std::move(msg));
  }
  static ApiError make(int code, std::string reason, std::string msg) {
    ApiError e;
    e.code = code;
    e.reason = std::move(reason);
    e.message = std::move(msg);
    return e;
  }
};

// "pods" in group "" prints as "pods"; "deployments" in "apps" as "deployments.apps", the
// way upstream names a qualified resource in messages.
std::string qualifiedResource(const std::string& group, const std::string& resource);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(ApiError error) : v_(std::move(error)) {}   // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const ApiError& error() const { return std::get<1>(v_); }
  ApiError& error() { return std::get<1>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;
inline Status okStatus() { return Ok{}; }

}  // namespace shepherd
