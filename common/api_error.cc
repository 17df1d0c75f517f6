#include "common/api_error.h"

#include <algorithm>

namespace shepherd {

std::string qualifiedResource(const std::string& group, const std::string& resource) {
  return group.empty() ? resource : resource + "." + group;
}

ApiError ApiError::notFound(std::string group, std::string resource, std::string name) {
  ApiError e = make(404, "NotFound", qualifiedResource(group, resource) + " \"" + name + "\" not found");
  e.group = std::move(group);
  e.kind = std::move(resource);
  e.name = std::move(name);
  return e;
}

ApiError ApiError::alreadyExists(std::string group, std::string resource, std::string name) {
  ApiError e =
      make(409, "AlreadyExists", qualifiedResource(group, resource) + " \"" + name + "\" already exists");
  e.group = std::move(group);
  e.kind = std::move(resource);
  e.name = std::move(name);
  return e;
}

ApiError ApiError::conflict(std::string group, std::string resource, std::string name, std::string why) {
  ApiError e = make(
      409, "Conflict",
      "Operation cannot be fulfilled on " + qualifiedResource(group, resource) + " \"" + name + "\": " + why);
  e.group = std::move(group);
  e.kind = std::move(resource);
  e.name = std::move(name);
  return e;
}

ApiError ApiError::invalid(std::string group, std::string kind, std::string name,
                           std::vector<StatusCause> causes) {
  std::string qualified = group.empty() ? kind : kind + "." + group;
  std::string msg = qualified + " \"" + name + "\" is invalid: ";
  // As upstream's ToAggregate: the message prints each distinct error once; the causes
  // keep them all.
  std::vector<std::string> lines;
  for (const auto& c : causes) {
    std::string line = c.field + ": " + c.message;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  if (lines.size() == 1) {
    msg += lines[0];
  } else {
    msg += "[";
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) msg += ", ";
      msg += lines[i];
    }
    msg += "]";
  }
  ApiError e = make(422, "Invalid", std::move(msg));
  e.group = std::move(group);
  e.kind = std::move(kind);
  e.name = std::move(name);
  e.causes = std::move(causes);
  return e;
}

ApiError ApiError::methodNotSupported(std::string group, std::string resource, std::string verb) {
  ApiError e =
      make(405, "MethodNotAllowed",
           verb + " is not supported on resources of kind \"" + qualifiedResource(group, resource) + "\"");
  e.group = std::move(group);
  e.kind = std::move(resource);
  return e;
}

ApiError ApiError::forbidden(std::string group, std::string resource, std::string name, std::string why) {
  // As upstream's NewForbidden: the name and the resource are left out when empty.
  std::string what = resource.empty() ? "forbidden: "
                     : name.empty()   ? qualifiedResource(group, resource) + " is forbidden: "
                                    : qualifiedResource(group, resource) + " \"" + name + "\" is forbidden: ";
  ApiError e = make(403, "Forbidden", what + why);
  e.group = std::move(group);
  e.kind = std::move(resource);
  e.name = std::move(name);
  return e;
}

}  // namespace shepherd
