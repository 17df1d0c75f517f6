// Claiming dependents by controllerRef, as upstream's ControllerRefManager: an owner keeps
// the dependents it controls that its selector still matches, releases the ones it no
// longer matches (removing its reference), and adopts orphans it matches (adding a
// controller reference) once a live read confirms it exists and is not being deleted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "meta/selectors.h"

namespace shepherd::controllers {

struct Owner {
  const json::Value* object = nullptr;  // the owner as cached
  std::string api_version, kind;
  std::string live_path;        // where a live GET of the owner goes (adoption check)
  std::string adopt_finalizer;  // added to a dependent when adopted (Jobs' tracking finalizer)
};

// `candidates`: the objects in the owner's namespace; `path_of` gives a candidate's API
// path (for the patches). Returns the claimed objects (adopted ones as updated).
Result<std::vector<client::Object>> claimObjects(
    client::Client& client, const Owner& owner, const meta::LabelSelector& selector,
    const std::vector<client::Object>& candidates,
    const std::function<std::string(const json::Value&)>& path_of);

// A controller reference to `owner` (controller and blockOwnerDeletion true).
json::Value controllerReference(const Owner& owner, json::Allocator& a);

}  // namespace shepherd::controllers
