# The third-party libraries, found once for every folder and test. Each is an imported
# target, so its headers are SYSTEM includes for whoever links it and their warnings do
# not fail our build. The libraries Debian ships without a CMake config are found by
# hand and wrapped in an imported target here.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(spdlog REQUIRED)
# Only its core (metric families, the text format) is linked; its CMake config still
# looks for civetweb, for its own pull library, which prometheus-cpp-dev brings along.
find_package(prometheus-cpp REQUIRED)
# Asio and Beast (header-only in 1.74, Boost.System included); reached only through
# infra/net/asio.hpp and infra/http/beast.hpp.
find_package(Boost 1.74 REQUIRED)
# OpenSSL: TLS on the device port (libssl-dev).
find_package(OpenSSL 3 REQUIRED)
# libpq (libpq-dev): `tgw sink postgres`.
find_package(PostgreSQL REQUIRED)
# toml++ (libtomlplusplus-dev) reads `tgw --config FILE`.
find_package(tomlplusplus 3 REQUIRED)

# tgw_imported_library(<target> <header> <library or "">): a library found by hand.
function(tgw_imported_library target header library)
  string(MAKE_C_IDENTIFIER ${target} var)
  string(TOUPPER ${var} var)
  find_path(${var}_INCLUDE_DIR ${header} REQUIRED)
  if(library)
    find_library(${var}_LIBRARY ${library} REQUIRED)
    add_library(${target} UNKNOWN IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${${var}_LIBRARY})
  else()
    add_library(${target} INTERFACE IMPORTED GLOBAL)
  endif()
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${${var}_INCLUDE_DIR})
endfunction()
tgw_imported_library(hiredis hiredis/hiredis.h hiredis)
# libpcap reads captures for `tgw replay`.
tgw_imported_library(pcap pcap/pcap.h pcap)
# CLI11 is header-only.
tgw_imported_library(CLI11 CLI/CLI.hpp "")
# Behaviour on CAF 0.17; its core library is all the actors use.
tgw_imported_library(caf_core caf/all.hpp caf_core)
