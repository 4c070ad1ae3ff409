#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "actors/ports/allowlist_source.hpp"

namespace tgw::infra::net {

/// The IMEIs of an allowlist file: one per line, `#` starts a comment line, blank
/// lines are skipped. Returns nullopt with `error` set when the file cannot be read,
/// a line is not an IMEI (15 or 16 digits), or the file lists no IMEI at all: an
/// empty list would silently let every device in, which is never what a file meant.
std::optional<std::unordered_set<std::string>> load_allowlist(const std::string& path,
                                                              std::string& error);

/// The allowlist source of `tgw serve --allowlist FILE`: load_allowlist(path) each time.
std::unique_ptr<ports::allowlist_source> file_allowlist(std::string path);

}  // namespace tgw::infra::net
