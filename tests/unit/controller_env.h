// What the controller sync tests share: a fake API server (client/fake_client.h), the
// informers a controller asks for, and waiting for them to show every write so far.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/fake_client.h"
#include "client/shared_informers.h"

namespace shepherd::testing {

inline json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}

// A fake API server, the informers a controller asks for, and the wait for them to show
// every write so far.
struct Env {
  client::FakeClient fake;
  client::SharedInformers informers{fake};
  client::EventRecorder events{fake, "test"};
  ~Env() {
    events.stop();
    informers.stop();
  }
  void start() {
    informers.start();
    ASSERT_TRUE(informers.waitForSync(10000));
    settle();
  }
  void settle() { ASSERT_TRUE(fake.waitForWatches(informers.size())); }
  // Declared after the controller under test, stops the informers before the controller
  // is destroyed, so no handler runs on a half-destroyed controller.
  struct StopGuard {
    Env& env;
    ~StopGuard() {
      env.events.stop();
      env.informers.stop();
    }
  };
  StopGuard stopBeforeController() { return StopGuard{*this}; }
  json::Document create(const std::string& path, const std::string& body) {
    auto r = fake.post(path, body);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::move(*r) : json::Document();
  }
  void patch(const std::string& path, const std::string& body) {
    auto r = fake.patch(path, body, "application/merge-patch+json");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  }
  json::Document get(const std::string& path) {
    auto r = fake.get(path);
    EXPECT_TRUE(r.ok()) << path;
    return r.ok() ? std::move(*r) : json::Document();
  }
  std::vector<json::Document> items(const std::string& path) {
    std::vector<json::Document> out;
    auto r = fake.get(path);
    if (!r) return out;
    for (auto& i : json::find(*r, "items")->GetArray()) {
      json::Document d;
      d.CopyFrom(i, d.GetAllocator());
      out.push_back(std::move(d));
    }
    return out;
  }
};

}  // namespace shepherd::testing
