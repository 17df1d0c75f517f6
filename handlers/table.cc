#include "handlers/table.h"

namespace shepherd::handlers {

std::string buildTable(const apis::Resource& r, const std::vector<storage::ObjectPtr>& items,
                       const TableOptions& opts, const std::string& list_meta_json) {
  json::Document t;
  t.SetObject();
  auto& a = t.GetAllocator();
  t.AddMember("kind", "Table", a);
  t.AddMember("apiVersion", json::str("meta.k8s.io/" + opts.version, a), a);
  json::Document lm;
  lm.Parse(list_meta_json.data(), list_meta_json.size());
  json::Value meta(rapidjson::kObjectType);
  if (!lm.HasParseError() && lm.IsObject()) meta.CopyFrom(lm, a);
  t.AddMember("metadata", meta, a);
  json::Value cols(rapidjson::kArrayType);
  if (opts.columns) {
    for (const auto& c : r.strategy->tableColumns()) {
      json::Value col(rapidjson::kObjectType);
      col.AddMember("name", json::str(c.name, a), a);
      col.AddMember("type", json::str(c.type, a), a);
      col.AddMember("format", json::str(c.format, a), a);
      col.AddMember("description", json::str(c.description, a), a);
      col.AddMember("priority", c.priority, a);
      cols.PushBack(col, a);
    }
  }
  t.AddMember("columnDefinitions", cols, a);
  json::Value rows(rapidjson::kArrayType);
  for (const auto& item : items) {
    json::Document obj;
    obj.Parse(item->json.data(), item->json.size());
    if (obj.HasParseError()) continue;
    json::Value row(rapidjson::kObjectType);
    json::Value cells(rapidjson::kArrayType);
    r.strategy->tableRow(obj, cells, a);
    row.AddMember("cells", cells, a);
    if (opts.include == IncludeObject::Object) {
      row.AddMember("object", json::Value(obj, a), a);
    } else if (opts.include == IncludeObject::Metadata) {
      json::Value pom(rapidjson::kObjectType);
      pom.AddMember("kind", "PartialObjectMetadata", a);
      pom.AddMember("apiVersion", json::str("meta.k8s.io/" + opts.version, a), a);
      if (const json::Value* m = json::find(obj, "metadata")) pom.AddMember("metadata", json::Value(*m, a), a);
      row.AddMember("object", pom, a);
    }
    rows.PushBack(row, a);
  }
  t.AddMember("rows", rows, a);
  return json::serialize(t);
}

}  // namespace shepherd::handlers
