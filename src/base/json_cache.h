// tern's small JSON cache files (`tern roofline`'s measurements, `--tune`'s algorithm
// choices): {"version": V, "entries": {KEY: VALUE, ...}} in $XDG_CACHE_HOME/tern/ or
// ~/.cache/tern/, replaced atomically (a temporary file renamed over it) so that a
// concurrent reader never sees half a file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tern {

/// $XDG_CACHE_HOME/tern/`name`, else $HOME/.cache/tern/`name`; "" when neither is set.
std::string tern_cache_path(std::string_view name);

/// A cache file's description for error messages: `what` names it ("roofline cache"),
/// `fix` says how it is recovered ("`tern roofline --measure` replaces it").
struct JsonCacheFile {
  std::string path;
  int version = 1;
  std::string what;
  std::string fix;
};

/// The file's contents, or null when the file does not exist. Throws IOError naming the
/// file and `fix` when it cannot be read, is not JSON, has another version (written by
/// another tern) or no "entries" object.
nlohmann::json read_json_cache(const JsonCacheFile& f);

/// Sets entries[key] = value in the file (created with its folder when missing; a corrupt
/// file is replaced). Throws IOError when the folder or file cannot be written.
void write_json_cache_entry(const JsonCacheFile& f, const std::string& key,
                            const nlohmann::json& value);

}  // namespace tern
