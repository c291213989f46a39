#include "base/json_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/check.h"

namespace tern {

std::string tern_cache_path(std::string_view name) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return (std::filesystem::path(xdg) / "tern" / name).string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".cache" / "tern" / name).string();
  return "";
}

nlohmann::json read_json_cache(const JsonCacheFile& f) {
  using json = nlohmann::json;
  std::error_code ec;
  if (!std::filesystem::exists(f.path, ec)) return nullptr;
  std::ifstream in(f.path, std::ios::binary);
  TERN_CHECK(in.good(), IOError, "{} '{}': cannot open it for reading", f.what, f.path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  TERN_CHECK(!j.is_discarded(), IOError, "{} '{}' is corrupt: not valid JSON ({})", f.what,
             f.path, f.fix);
  const auto version = j.find("version");  // end() when j is no object
  TERN_CHECK(version == j.end() || !version->is_number_integer() || *version == f.version, IOError,
             "{} '{}' was written by another tern: version {}, this tern reads {} ({})", f.what,
             f.path, version->dump(), f.version, f.fix);
  TERN_CHECK(version != j.end() && version->is_number_integer() && *version == f.version &&
                 j.contains("entries") && j["entries"].is_object(),
             IOError,
             "{} '{}' is corrupt: expected an object with \"version\": {} and \"entries\" ({})",
             f.what, f.path, f.version, f.fix);
  return j;
}

void write_json_cache_entry(const JsonCacheFile& f, const std::string& key,
                            const nlohmann::json& value) {
  using json = nlohmann::json;
  json file;
  try {
    file = read_json_cache(f);
  } catch (const IOError&) {
    file = nullptr;  // corrupt: replaced
  }
  if (file.is_null()) file = {{"version", f.version}, {"entries", json::object()}};
  file["entries"][key] = value;

  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(f.path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  TERN_CHECK(!ec, IOError, "{} '{}': cannot create its folder: {}", f.what, f.path, ec.message());
  const std::string tmp = fmt::format("{}.tmp{}", f.path, static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    TERN_CHECK(out.good(), IOError, "{} '{}': cannot write '{}'", f.what, f.path, tmp);
    out << file.dump(2) << "\n";
    out.flush();
    TERN_CHECK(out.good(), IOError, "{} '{}': writing '{}' failed", f.what, f.path, tmp);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    TERN_THROW(IOError, "{} '{}': cannot replace it", f.what, f.path);
  }
}

}  // namespace tern
