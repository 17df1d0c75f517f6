#include "kubelet-lite/volumes.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/files.h"
#include "common/log.h"
#include "meta/quantity.h"

namespace shepherd::kubelet {

namespace fs = std::filesystem;

namespace {

bool mkdirs(const std::string& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  return !ec;
}

int modeOf(const json::Value* v, int def) {
  if (v && v->IsInt64()) return static_cast<int>(v->GetInt64()) & 07777;
  return def;
}

// The file paths a volume holds, relative to its directory (as upstream's AtomicWriter
// payload: what is not in it any more is removed on the next update).
using Written = std::set<std::string>;

std::string relPath(const std::string& p) {
  return fs::path(p).lexically_normal().string();
}

// Writes the keys of `data` (or the selected `items`) into `dir`. A missing key is an
// error with upstream's message (configmap.MakePayload / secret.MakePayload).
Status writeProjection(const std::string& dir, const std::map<std::string, std::string>& data,
                       const json::Value* items, int defaultMode, bool secret, bool optional,
                       Written& written) {
  if (items && items->IsArray() && items->Size() > 0) {
    for (auto& it : items->GetArray()) {
      std::string key(json::getString(it, "key"));
      std::string path(json::getString(it, "path"));
      auto found = data.find(key);
      if (found == data.end()) {
        if (optional) continue;
        return ApiError::make(400, "FailedMount",
                              secret ? "references non-existent secret key: " + key
                                     : "configmap references non-existent config key: " + key);
      }
      std::string target = dir + "/" + path;
      mkdirs(fs::path(target).parent_path().string());
      writeFileAtomic(target, found->second, modeOf(json::find(it, "mode"), defaultMode));
      written.insert(relPath(path));
    }
    return okStatus();
  }
  for (const auto& [k, v] : data) {
    writeFileAtomic(dir + "/" + k, v, defaultMode);
    written.insert(relPath(k));
  }
  return okStatus();
}

// Removes the files of `dir` that the volume's latest content no longer has.
void pruneStale(const std::string& dir, const Written& written) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && !it->is_symlink(ec2)) continue;
    std::string rel = it->path().lexically_relative(dir).lexically_normal().string();
    if (!written.count(rel)) stale.push_back(it->path());
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

// Whether `dir` is a mount point (its device differs from its parent's), as upstream's
// IsLikelyNotMountPoint decides.
bool isMountPoint(const std::string& dir) {
  struct stat st {
  }, parent{};
  if (stat(dir.c_str(), &st) != 0 || stat((dir + "/..").c_str(), &parent) != 0) return false;
  return st.st_dev != parent.st_dev;
}

Status projectDownward(const std::string& dir, const json::Value* items, const PodFacts& facts,
                       int defaultMode, Written& written) {
  if (!items || !items->IsArray()) return okStatus();
  for (auto& it : items->GetArray()) {
    std::string path(json::getString(it, "path"));
    std::string value;
    if (const json::Value* f = json::find(it, "fieldRef")) {
      value = fieldRef(facts, std::string(json::getString(*f, "fieldPath"))).value_or("");
    } else if (const json::Value* r = json::find(it, "resourceFieldRef")) {
      std::string cname(json::getString(*r, "containerName"));
      const json::Value* target = nullptr;
      if (const json::Value* cs = json::findPath(*facts.pod, {"spec", "containers"}); cs && cs->IsArray())
        for (auto& c : cs->GetArray())
          if (json::getString(c, "name") == cname || (cname.empty() && !target)) target = &c;
      std::string divisor;
      if (const json::Value* d = json::find(*r, "divisor"))
        divisor = d->IsString() ? std::string(json::view(*d)) : json::serialize(*d);
      if (target)
        value = resourceFieldRef(*target, facts, std::string(json::getString(*r, "resource")), divisor)
                    .value_or("");
    }
    std::string target = dir + "/" + path;
    mkdirs(fs::path(target).parent_path().string());
    writeFileAtomic(target, value, modeOf(json::find(it, "mode"), defaultMode));
    written.insert(relPath(path));
  }
  return okStatus();
}

}  // namespace

// Upstream's hostPath checkTypeInternal: the *OrCreate types create what is missing (a
// directory 0755, or a file 0644 without its parents), then every type checks the kind.
Status checkHostPathType(const std::string& path, const std::string& type) {
  if (type.empty()) return okStatus();
  struct stat st {};
  bool exists = stat(path.c_str(), &st) == 0;
  auto failed = [&](const std::string& what) {
    return ApiError::make(400, "FailedMount", "hostPath type check failed: " + path + " is not a " + what);
  };
  if (type == "DirectoryOrCreate" || type == "Directory") {
    if (type == "DirectoryOrCreate" && !exists) {
      if (!makeDirs(path, 0755))
        return ApiError::make(400, "FailedMount", "mkdir " + path + ": " + std::strerror(errno));
      return okStatus();
    }
    if (!exists || !S_ISDIR(st.st_mode)) return failed("directory");
  } else if (type == "FileOrCreate" || type == "File") {
    if (type == "FileOrCreate" && !exists) {
      int fd = ::open(path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
      if (fd < 0) return ApiError::make(400, "FailedMount", "open " + path + ": " + std::strerror(errno));
      ::close(fd);
      return okStatus();
    }
    if (!exists || !S_ISREG(st.st_mode)) return failed("file");
  } else if (type == "Socket") {
    if (!exists || !S_ISSOCK(st.st_mode)) return failed("socket file");
  } else if (type == "CharDevice") {
    if (!exists || !S_ISCHR(st.st_mode)) return failed("character device");
  } else if (type == "BlockDevice") {
    if (!exists || !S_ISBLK(st.st_mode)) return failed("block device");
  } else {
    return ApiError::make(400, "FailedMount", type + " is an invalid volume type");
  }
  return okStatus();
}

bool writeFileAtomic(const std::string& path, const std::string& content, int mode) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f << content;
  }
  chmod(tmp.c_str(), static_cast<mode_t>(mode));
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string podHostname(const json::Value& pod) {
  std::string hostname(json::getStringPath(pod, {"spec", "hostname"}));
  if (hostname.empty()) hostname = json::getStringPath(pod, {"metadata", "name"});
  if (hostname.size() > 63) {
    hostname.resize(63);
    while (!hostname.empty() && (hostname.back() == '-' || hostname.back() == '.')) hostname.pop_back();
  }
  return hostname;
}

std::string hostsFile(const json::Value& pod, const std::string& pod_ip) {
  std::string out =
      "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";
  std::string hostname = podHostname(pod);
  std::string subdomain(json::getStringPath(pod, {"spec", "subdomain"}));
  if (!pod_ip.empty()) {
    if (!subdomain.empty()) {
      std::string fqdn = hostname + "." + subdomain + "." +
                         std::string(json::getStringPath(pod, {"metadata", "namespace"})) +
                         ".svc.cluster.local";
      out += pod_ip + "\t" + fqdn + "\t" + hostname + "\n";
    } else {
      out += pod_ip + "\t" + hostname + "\n";
    }
  }
  if (const json::Value* aliases = json::findPath(pod, {"spec", "hostAliases"});
      aliases && aliases->IsArray() && aliases->Size()) {
    out += "\n# Entries added by HostAliases.\n";
    for (auto& a : aliases->GetArray()) {
      out += std::string(json::getString(a, "ip"));
      if (const json::Value* hs = json::find(a, "hostnames"); hs && hs->IsArray())
        for (auto& h : hs->GetArray()) out += "\t" + std::string(json::view(h));
      out += "\n";
    }
  }
  return out;
}

Result<std::string> writeHostsFile(const std::string& pod_dir, const json::Value& pod,
                                   const std::string& pod_ip) {
  std::string path = pod_dir + "/etc-hosts";
  if (!mkdirs(pod_dir)) return ApiError::make(500, "InternalError", "cannot create " + pod_dir);
  // A runtime bind-mounting a missing source creates a directory there; an empty one (left
  // by such a mount) is replaced by the file.
  std::error_code ec;
  if (fs::is_directory(path, ec)) fs::remove(path, ec);
  if (!writeFileAtomic(path, hostsFile(pod, pod_ip), 0644))
    return ApiError::make(500, "InternalError", "cannot write the pod's hosts file " + path);
  return path;
}

void applyFsGroup(const std::string& dir, gid_t gid, bool read_only) {
  std::error_code ec;
  auto fix = [&](const fs::path& p) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) return;
    if (lchown(p.c_str(), static_cast<uid_t>(-1), gid) != 0) return;
    if (S_ISLNK(st.st_mode)) return;
    mode_t mode = st.st_mode & 07777;
    if (S_ISDIR(st.st_mode))
      mode |= 0070 | S_ISGID;
    else
      mode |= read_only ? 0040 : 0060;
    chmod(p.c_str(), mode);
  };
  fix(dir);
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    fix(it->path());
}

Result<PreparedVolumes> prepareVolumes(const std::string& pod_dir, const PodFacts& facts,
                                       const DataLookup& lookup, const ClaimLookup& claims) {
  PreparedVolumes out;
  const json::Value& pod = *facts.pod;
  std::string ns(json::getStringPath(pod, {"metadata", "namespace"}));
  const json::Value* vols = json::findPath(pod, {"spec", "volumes"});
  if (!vols || !vols->IsArray()) return out;
  for (auto& v : vols->GetArray()) {
    std::string name(json::getString(v, "name"));
    std::string dir = pod_dir + "/volumes/" + name;
    std::string claim;
    if (const json::Value* pvc = json::find(v, "persistentVolumeClaim"); pvc && pvc->IsObject())
      claim = json::getString(*pvc, "claimName");
    else if (const json::Value* eph = json::find(v, "ephemeral"); eph && eph->IsObject())
      claim = std::string(json::getStringPath(pod, {"metadata", "name"})) + "-" + name;
    if (!claim.empty()) {
      Result<std::string> path =
          claims ? claims(ns, claim) : Result<std::string>(ApiError::internal("no claim lookup"));
      if (!path)
        return ApiError::make(400, "UnmountedVolumes",
                              "Unable to attach or mount volumes: unmounted volumes=[" + name +
                                  "], unattached volumes=[], failed to process volumes=[" + name +
                                  "]: " + path.error().message);
      out.host_paths[name] = *path;
      continue;
    }
    if (const json::Value* hp = json::find(v, "hostPath")) {
      std::string path(json::getString(*hp, "path"));
      if (auto st = checkHostPathType(path, std::string(json::getString(*hp, "type"))); !st)
        return st.error();
      out.host_paths[name] = path;
      continue;
    }
    mkdirs(dir);
    if (const json::Value* ed = json::find(v, "emptyDir")) {
      if (json::getString(*ed, "medium") == "Memory") {
        std::string opts = "mode=0777";
        // In bytes, as upstream's setupTmpfs (tmpfs does not read quantity suffixes like Mi).
        if (const json::Value* size = json::find(*ed, "sizeLimit"))
          if (auto bytes = meta::quantityValue(*size); bytes && *bytes > 0)
            opts += ",size=" + std::to_string(static_cast<long long>(std::ceil(*bytes)));
        // Mounted by an earlier prepare: mounting again would hide the volume's content.
        if (isMountPoint(dir) || mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0 || errno == EBUSY)
          out.tmpfs_mounts.push_back(dir);
        else
          LOG_WARN("kubelet-lite: tmpfs for " << dir << " failed: " << std::strerror(errno));
      }
      chmod(dir.c_str(), 0777);
    } else if (const json::Value* cm = json::find(v, "configMap")) {
      std::string cmName(json::getString(*cm, "name"));
      bool optional = json::getBool(*cm, "optional");
      auto data = lookup("configmaps", ns, cmName);
      if (!data && !optional)
        return ApiError::make(400, "FailedMount", "configmap \"" + cmName + "\" not found");
      Written written;
      if (data)
        if (auto st = writeProjection(dir, *data, json::find(*cm, "items"),
                                      modeOf(json::find(*cm, "defaultMode"), 0644), false, optional, written);
            !st)
          return st.error();
      pruneStale(dir, written);
    } else if (const json::Value* sec = json::find(v, "secret")) {
      std::string secName(json::getString(*sec, "secretName"));
      bool optional = json::getBool(*sec, "optional");
      auto data = lookup("secrets", ns, secName);
      if (!data && !optional)
        return ApiError::make(400, "FailedMount", "secret \"" + secName + "\" not found");
      Written written;
      if (data)
        if (auto st = writeProjection(dir, *data, json::find(*sec, "items"),
                                      modeOf(json::find(*sec, "defaultMode"), 0644), true, optional, written);
            !st)
          return st.error();
      pruneStale(dir, written);
    } else if (const json::Value* da = json::find(v, "downwardAPI")) {
      Written written;
      if (auto st = projectDownward(dir, json::find(*da, "items"), facts,
                                    modeOf(json::find(*da, "defaultMode"), 0644), written);
          !st)
        return st.error();
      pruneStale(dir, written);
    } else if (const json::Value* pj = json::find(v, "projected")) {
      int mode = modeOf(json::find(*pj, "defaultMode"), 0644);
      Written written;
      if (const json::Value* sources = json::find(*pj, "sources"); sources && sources->IsArray()) {
        for (auto& src : sources->GetArray()) {
          if (const json::Value* cm = json::find(src, "configMap")) {
            std::string n(json::getString(*cm, "name"));
            auto data = lookup("configmaps", ns, n);
            bool optional = json::getBool(*cm, "optional");
            if (!data && !optional)
              return ApiError::make(400, "FailedMount", "configmap \"" + n + "\" not found");
            if (data)
              if (auto st =
                      writeProjection(dir, *data, json::find(*cm, "items"), mode, false, optional, written);
                  !st)
                return st.error();
          } else if (const json::Value* sec = json::find(src, "secret")) {
            std::string n(json::getString(*sec, "name"));
            auto data = lookup("secrets", ns, n);
            bool optional = json::getBool(*sec, "optional");
            if (!data && !optional)
              return ApiError::make(400, "FailedMount", "secret \"" + n + "\" not found");
            if (data)
              if (auto st =
                      writeProjection(dir, *data, json::find(*sec, "items"), mode, true, optional, written);
                  !st)
                return st.error();
          } else if (const json::Value* da = json::find(src, "downwardAPI")) {
            if (auto st = projectDownward(dir, json::find(*da, "items"), facts, mode, written); !st)
              return st.error();
          }
          // serviceAccountToken sources need the token API (security issue); skipped.
        }
      }
      pruneStale(dir, written);
    }
    // fsGroup: the volume belongs to the pod's group (upstream's SetVolumeOwnership):
    // group-owned, group-readable (and writable for emptyDir), setgid directories.
    if (const json::Value* fsGroup = json::findPath(pod, {"spec", "securityContext", "fsGroup"});
        fsGroup && fsGroup->IsInt64())
      applyFsGroup(dir, static_cast<gid_t>(fsGroup->GetInt64()), json::find(v, "emptyDir") == nullptr);
    out.host_paths[name] = dir;
  }
  return out;
}

void teardownVolumes(const std::string& pod_dir) {
  std::error_code ec;
  std::string vols = pod_dir + "/volumes";
  if (fs::exists(vols, ec)) {
    for (auto& entry : fs::directory_iterator(vols, ec)) {
      std::string p = entry.path().string();
      umount2(p.c_str(), MNT_DETACH);  // tmpfs volumes; harmless elsewhere
    }
  }
  fs::remove_all(pod_dir, ec);
  if (ec) LOG_WARN("kubelet-lite: cannot remove " << pod_dir << ": " << ec.message());
}

}  // namespace shepherd::kubelet
