// What the batch controllers (job, cronjob, ttl-after-finished) read from a Job: whether
// it has finished, how, and when.
#pragma once

#include <optional>
#include <string>

#include "common/clock.h"
#include "common/json.h"

namespace shepherd::controllers {

// The Job's true Complete or Failed condition ("Complete", "Failed"), or null.
const json::Value* finishedJobCondition(const json::Value& job);
// "Complete", "Failed" or "" (not finished).
std::string jobFinishedType(const json::Value& job);
// When it finished (its terminal condition's lastTransitionTime).
std::optional<clock::TimePoint> jobFinishedAt(const json::Value& job);

}  // namespace shepherd::controllers
