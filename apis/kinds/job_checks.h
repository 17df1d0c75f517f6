// JobSpec rules shared by Job and CronJob's jobTemplate (upstream's validateJobSpec), and
// the completed/failed index lists both the API and the Job controller read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

// Every JobSpec field but the selector, at `path` ("spec" or "spec.jobTemplate.spec").
void validateJobSpecFields(const json::Value& spec, const std::string& path, FieldErrors& errs);

// Defaults of a JobSpec (SetDefaults_Job's spec part).
void defaultJobSpec(json::Value& spec, json::Allocator& a);

// "1,3-5,7" with every index below `completions` and increasing: the number of indexes,
// or why not (upstream's validateIndexesFormat wording).
struct IndexesFormat {
  int64_t total = 0;
  std::string error;  // empty when valid
};
IndexesFormat parseIndexesFormat(std::string_view indexes, int64_t completions);

// A JSON value as a compact string, for "Invalid value" reprs of structs.
std::string jsonRepr(const json::Value& v);

}  // namespace shepherd::apis::kinds
