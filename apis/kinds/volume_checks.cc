// Pod volumes and the downward API selectors they share with env: upstream's
// ValidateVolumes, validateVolumeSource and the per-source checks.
#include <algorithm>
#include <cctype>

#include "apis/kinds/podspec_checks.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

const char* kFileModeError = "must be a number between 0 and 0777 (octal), both inclusive";

void validateMode(const json::Value& obj, std::string_view key, const std::string& field, FieldErrors& errs) {
  if (auto m = json::getInt(obj, key); m && (*m < 0 || *m > 0777))
    errs.invalid(field, std::to_string(*m), kFileModeError);
}

void validatePathNoBacksteps(std::string_view p, const std::string& field, FieldErrors& errs) {
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    std::string_view part =
        p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == "..") {
      errs.invalid(field, quote(p), "must not contain '..'");
      return;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
}

// ValidateLocalNonReservedPath: relative, no '..' element, not starting with "..".
void validateLocalNonReservedPath(std::string_view p, const std::string& field, FieldErrors& errs) {
  validateLocalDescendingPath(p, field, errs);
  if (p.substr(0, 2) == ".." && p.substr(0, 3) != "../")
    errs.invalid(field, quote(p), "must not start with '..'");
}

void validateKeyToPath(const json::Value& kp, const std::string& path, FieldErrors& errs) {
  if (json::getString(kp, "key").empty()) errs.required(path + ".key");
  std::string_view p = json::getString(kp, "path");
  if (p.empty()) errs.required(path + ".path");
  validateLocalNonReservedPath(p, path + ".path", errs);
  validateMode(kp, "mode", path + ".mode", errs);
}

void validateItems(const json::Value& src, const std::string& path, FieldErrors& errs) {
  if (const json::Value* items = json::find(src, "items"); items && items->IsArray())
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i)
      validateKeyToPath((*items)[i], indexed(path + ".items", i), errs);
}

// A downward API file. Upstream reports its problems at the volume (or projection
// source) path, without the item's index.
void validateDownwardAPIFile(const json::Value& file, const std::string& path, FieldErrors& errs) {
  std::string_view p = json::getString(file, "path");
  if (p.empty()) errs.required(path + ".path");
  validateLocalNonReservedPath(p, path + ".path", errs);
  const json::Value* fieldRef = json::find(file, "fieldRef");
  const json::Value* resRef = json::find(file, "resourceFieldRef");
  if (fieldRef && fieldRef->IsObject()) {
    validateObjectFieldSelector(*fieldRef, path + ".fieldRef", true, errs);
    if (resRef && resRef->IsObject())
      errs.invalid(path, "\"resource\"", "fieldRef and resourceFieldRef can not be specified simultaneously");
  } else if (resRef && resRef->IsObject()) {
    validateResourceFieldSelector(*resRef, path + ".resourceFieldRef", true, errs);
  } else {
    errs.required(path, "one of fieldRef and resourceFieldRef is required");
  }
  validateMode(file, "mode", path + ".mode", errs);
}

void validateProjected(const json::Value& src, const std::string& path, FieldErrors& errs) {
  validateMode(src, "defaultMode", path + ".defaultMode", errs);
  const json::Value* sources = json::find(src, "sources");
  if (!sources || !sources->IsArray()) return;
  std::set<std::string> paths;
  for (rapidjson::SizeType i = 0; i < sources->Size(); ++i) {
    const json::Value& s = (*sources)[i];
    std::string sp = indexed(path + ".sources", i);
    int kinds = 0;
    for (const char* kind : {"secret", "configMap"}) {
      const json::Value* ref = json::find(s, kind);
      if (!ref || !ref->IsObject()) continue;
      ++kinds;
      std::string rp = sp + "." + kind;
      std::string_view name = json::getString(*ref, "name");
      if (name.empty()) errs.required(rp + ".name");
      if (const json::Value* items = json::find(*ref, "items"); items && items->IsArray())
        for (rapidjson::SizeType j = 0; j < items->Size(); ++j) {
          validateKeyToPath((*items)[j], indexed(rp + ".items", j), errs);
          std::string p(json::getString((*items)[j], "path"));
          if (!p.empty() && !paths.insert(p).second)
            errs.invalid(path, quote(name), "conflicting duplicate paths");
        }
    }
    if (const json::Value* d = json::find(s, "downwardAPI"); d && d->IsObject()) {
      ++kinds;
      if (const json::Value* items = json::find(*d, "items"); items && items->IsArray())
        for (auto& file : items->GetArray()) {
          validateDownwardAPIFile(file, sp + ".downwardAPI", errs);
          std::string p(json::getString(file, "path"));
          if (!p.empty() && !paths.insert(p).second)
            errs.invalid(path, quote(p), "conflicting duplicate paths");
        }
    }
    if (const json::Value* t = json::find(s, "serviceAccountToken"); t && t->IsObject()) {
      ++kinds;
      int64_t exp = json::getInt(*t, "expirationSeconds").value_or(0);
      std::string ep = sp + ".serviceAccountToken.expirationSeconds";
      if (exp < 600) errs.invalid(ep, std::to_string(exp), "may not specify a duration less than 10 minutes");
      if (exp > (int64_t{1} << 32))
        errs.invalid(ep, std::to_string(exp), "may not specify a duration larger than 2^32 seconds");
      // Upstream names the projected volume's path here, not the source's.
      std::string_view p = json::getString(*t, "path");
      if (p.empty())
        errs.required(path + ".path");
      else
        validateLocalNonReservedPath(p, path + ".path", errs);
    }
    if (const json::Value* b = json::find(s, "clusterTrustBundle"); b && b->IsObject()) ++kinds;
    if (kinds > 1) errs.forbidden(sp, "may not specify more than 1 volume type per source");
  }
}

void validateSource(std::string_view kind, const json::Value& src, const std::string& path,
                    FieldErrors& errs) {
  if (kind == "emptyDir") {
    if (const json::Value* limit = json::find(src, "sizeLimit"))
      if (meta::quantityValue(*limit).value_or(0) < 0)
        errs.forbidden(path + ".sizeLimit", "SizeLimit field must be a valid resource quantity");
  } else if (kind == "hostPath") {
    std::string_view p = json::getString(src, "path");
    if (p.empty()) {
      errs.required(path + ".path");
      return;
    }
    validatePathNoBacksteps(p, path + ".path", errs);
    if (const json::Value* t = json::find(src, "type"); t && t->IsString()) {
      std::string_view v = json::view(*t);
      static const std::vector<std::string> types = {
          "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
          "File", "FileOrCreate", "Socket"};
      if (std::find(types.begin(), types.end(), v) == types.end())
        errs.notSupported(path + ".type", std::string(v), types);
    }
  } else if (kind == "secret" || kind == "configMap") {
    const char* nameKey = kind == "secret" ? "secretName" : "name";
    if (json::getString(src, nameKey).empty()) errs.required(path + "." + nameKey);
    validateMode(src, "defaultMode", path + ".defaultMode", errs);
    validateItems(src, path, errs);
  } else if (kind == "persistentVolumeClaim") {
    if (json::getString(src, "claimName").empty()) errs.required(path + ".claimName");
  } else if (kind == "downwardAPI") {
    validateMode(src, "defaultMode", path + ".defaultMode", errs);
    if (const json::Value* items = json::find(src, "items"); items && items->IsArray())
      for (auto& file : items->GetArray()) validateDownwardAPIFile(file, path, errs);
  } else if (kind == "projected") {
    validateProjected(src, path, errs);
  } else if (kind == "nfs") {
    if (json::getString(src, "server").empty()) errs.required(path + ".server");
    std::string_view p = json::getString(src, "path");
    if (p.empty()) errs.required(path + ".path");
    if (p.empty() || p.front() != '/') errs.invalid(path + ".path", quote(p), "must be an absolute path");
  } else if (kind == "gitRepo") {
    if (json::getString(src, "repository").empty()) errs.required(path + ".repository");
    validateLocalDescendingPath(json::getString(src, "directory"), path + ".directory", errs);
  }
}

// The volume sources in upstream's order, with the name its "more than 1 volume type"
// error uses (upstream spells two of them differently from the field).
struct SourceKind {
  const char* field;
  const char* forbidden_name;
};
const SourceKind kSources[] = {
    {"emptyDir", "emptyDir"},
    {"hostPath", "hostPath"},
    {"gitRepo", "gitRepo"},
    {"gcePersistentDisk", "gcePersistentDisk"},
    {"awsElasticBlockStore", "awsElasticBlockStore"},
    {"secret", "secret"},
    {"nfs", "nfs"},
    {"iscsi", "iscsi"},
    {"glusterfs", "glusterfs"},
    {"flocker", "flocker"},
    {"persistentVolumeClaim", "persistentVolumeClaim"},
    {"rbd", "rbd"},
    {"cinder", "cinder"},
    {"cephfs", "cephFS"},
    {"quobyte", "quobyte"},
    {"downwardAPI", "downwarAPI"},
    {"fc", "fc"},
    {"flexVolume", "flexVolume"},
    {"configMap", "configMap"},
    {"azureFile", "azureFile"},
    {"vsphereVolume", "vsphereVolume"},
    {"photonPersistentDisk", "photonPersistentDisk"},
    {"portworxVolume", "portworxVolume"},
    {"azureDisk", "azureDisk"},
    {"storageos", "storageos"},
    {"projected", "projected"},
    {"scaleIO", "scaleIO"},
    {"csi", "csi"},
    {"ephemeral", "ephemeral"},
    {"image", "image"},
};

}  // namespace

void validateLocalDescendingPath(std::string_view p, const std::string& field, FieldErrors& errs) {
  if (!p.empty() && p.front() == '/') errs.invalid(field, quote(p), "must be a relative path");
  validatePathNoBacksteps(p, field, errs);
}

void validateObjectFieldSelector(const json::Value& ref, const std::string& path, bool for_volume,
                                 FieldErrors& errs) {
  std::string_view version = json::getString(ref, "apiVersion");
  if (version.empty()) {
    errs.required(path + ".apiVersion");
    return;
  }
  std::string_view fp = json::getString(ref, "fieldPath");
  if (fp.empty()) {
    errs.required(path + ".fieldPath");
    return;
  }
  // metadata.labels['key'] and metadata.annotations['key'].
  std::string_view base = fp, subscript;
  bool subscripted = false;
  if (fp.size() >= 2 && fp.substr(fp.size() - 2) == "']") {
    auto open = fp.find("['");
    if (open != std::string_view::npos && open > 0) {
      subscripted = true;
      base = fp.substr(0, open);
      subscript = fp.substr(open + 2, fp.size() - open - 4);
    }
  }
  std::string converted(fp);
  if (version != "v1") {
    errs.invalid(path + ".fieldPath", quote(fp),
                 "error converting fieldPath: unsupported pod version: " + std::string(version));
    return;
  }
  static const std::set<std::string_view> known = {
      "metadata.annotations", "metadata.labels", "metadata.name",      "metadata.namespace",
      "metadata.uid",         "spec.nodeName",   "spec.restartPolicy", "spec.serviceAccountName",
      "spec.schedulerName",   "status.phase",    "status.hostIP",      "status.hostIPs",
      "status.podIP",         "status.podIPs"};
  if (subscripted && base != "metadata.annotations" && base != "metadata.labels") {
    errs.invalid(path + ".fieldPath", quote(fp),
                 "error converting fieldPath: field label does not support subscript: " + std::string(fp));
    return;
  }
  if (!subscripted) {
    if (fp == "spec.host") {
      converted = "spec.nodeName";
    } else if (!known.count(fp)) {
      errs.invalid(path + ".fieldPath", quote(fp),
                   "error converting fieldPath: field label not supported: " + std::string(fp));
      return;
    }
  }
  if (subscripted) {
    std::string key(subscript);
    if (base == "metadata.annotations")
      for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(path, quote(key), e);
    return;
  }
  static const std::vector<std::string> envPaths = {
      "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
      "status.hostIP", "status.hostIPs",     "status.podIP", "status.podIPs"};
  static const std::vector<std::string> volumePaths = {"metadata.annotations", "metadata.labels",
                                                       "metadata.name", "metadata.namespace", "metadata.uid"};
  const auto& allowed = for_volume ? volumePaths : envPaths;
  if (std::find(allowed.begin(), allowed.end(), converted) == allowed.end())
    errs.notSupported(path + ".fieldPath", converted, allowed);
}

void validateResourceFieldSelector(const json::Value& ref, const std::string& path, bool for_volume,
                                   FieldErrors& errs) {
  std::string_view res = json::getString(ref, "resource");
  static const std::vector<std::string> resources = {
      "limits.cpu",   "limits.ephemeral-storage",   "limits.memory",
      "requests.cpu", "requests.ephemeral-storage", "requests.memory"};
  if (for_volume && json::getString(ref, "containerName").empty()) {
    errs.required(path + ".containerName");
  } else if (res.empty()) {
    errs.required(path + ".resource");
  } else if (std::find(resources.begin(), resources.end(), res) == resources.end() &&
             res.substr(0, 19) != "requests.hugepages-" && res.substr(0, 17) != "limits.hugepages-") {
    errs.notSupported(path + ".resource", std::string(res), resources);
  }
  const json::Value* divisor = json::find(ref, "divisor");
  if (!divisor || meta::quantityValue(*divisor).value_or(0) == 0) return;
  std::string d = meta::canonicalQuantity(meta::quantityText(*divisor));
  static const std::set<std::string> bytes = {"1",   "1k",  "1M",  "1G",  "1T",  "1P", "1E",
                                              "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"};
  const char* allowedBytes = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei";
  std::string field = path + ".divisor";
  if ((res == "limits.cpu" || res == "requests.cpu") && d != "1m" && d != "1")
    errs.invalid(field, quote(res), "only divisor's values 1m and 1 are supported with the cpu resource");
  else if ((res == "limits.memory" || res == "requests.memory") && !bytes.count(d))
    errs.invalid(
        field, quote(res),
        std::string("only divisor's values ") + allowedBytes + " are supported with the memory resource");
  else if ((res == "limits.ephemeral-storage" || res == "requests.ephemeral-storage") && !bytes.count(d))
    errs.invalid(field, quote(res),
                 std::string("only divisor's values ") + allowedBytes +
                     " are supported with the local ephemeral storage resource");
  if ((res.substr(0, 19) == "requests.hugepages-" || res.substr(0, 17) == "limits.hugepages-") &&
      !bytes.count(d))
    errs.invalid(
        field, quote(res),
        std::string("only divisor's values ") + allowedBytes + " are supported with the hugepages resource");
}

std::set<std::string> validateVolumes(const json::Value* volumes, const std::string& path,
                                      FieldErrors& errs) {
  std::set<std::string> valid;
  if (!volumes || !volumes->IsArray()) return valid;
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const json::Value& v = (*volumes)[i];
    std::string vp = indexed(path, i);
    FieldErrors own;
    int count = 0;
    for (const auto& k : kSources) {
      const json::Value* src = json::find(v, k.field);
      if (!src || src->IsNull()) continue;
      if (count++ > 0) {
        own.forbidden(vp + "." + k.forbidden_name, "may not specify more than 1 volume type");
        continue;
      }
      validateSource(k.field, *src, vp + "." + k.field, own);
    }
    if (count == 0) own.required(vp, "must specify a volume type");
    std::string_view name = json::getString(v, "name");
    if (name.empty()) {
      own.required(vp + ".name");
    } else {
      for (auto& e : meta::validation::dns1123Label(name)) own.invalid(vp + ".name", quote(name), e);
    }
    if (names.count(std::string(name))) own.duplicate(vp + ".name", quote(name));
    // A volume with problems stays out of the set, so its mounts are "Not found" too.
    if (own.empty()) {
      names.insert(std::string(name));
      valid.insert(std::string(name));
    }
    for (auto& c : own.causes()) errs.add(std::move(c));
  }
  return valid;
}

}  // namespace shepherd::apis::kinds
