#include "infra/sink/copy_text.hpp"

#include <charconv>
#include <chrono>
#include <string_view>

namespace tgw::infra::sink {
namespace {

// COPY text format: backslash, tab, newline and carriage return are escaped.
void append_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
}

void append_integer(std::string& out, std::int64_t v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// Degrees from degrees x 10^7, as the shortest text that reads back as the same double.
void append_degrees(std::string& out, std::int64_t e7) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(e7) / 1e7);
  out.append(buf, end);
}

void append_digits(std::string& out, unsigned value, int width) {
  char buf[8];
  for (int i = width - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(buf, static_cast<std::size_t>(width));
}

// "2023-11-14T22:13:20.123Z", as iso8601_utc_ms writes it, without printf: two a row.
void append_time(std::string& out, std::int64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds{ms}};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  append_digits(out, static_cast<unsigned>(static_cast<int>(ymd.year())), 4);
  out += '-';
  append_digits(out, static_cast<unsigned>(ymd.month()), 2);
  out += '-';
  append_digits(out, static_cast<unsigned>(ymd.day()), 2);
  out += 'T';
  append_digits(out, static_cast<unsigned>(hms.hours().count()), 2);
  out += ':';
  append_digits(out, static_cast<unsigned>(hms.minutes().count()), 2);
  out += ':';
  append_digits(out, static_cast<unsigned>(hms.seconds().count()), 2);
  out += '.';
  append_digits(out, static_cast<unsigned>(hms.subseconds().count()), 3);
  out += 'Z';
}

}  // namespace

const char* position_columns() {
  return "stream_id, stored_at, imei, codec, ts, priority, latitude, longitude, altitude, angle, "
         "satellites, speed, event_io, generation, io, io_named, extra";
}

std::string copy_text(const std::vector<position_row>& rows) {
  std::string out;
  out.reserve(rows.size() * 320);
  for (const position_row& r : rows) {
    append_escaped(out, r.stream_id);
    out += '\t';
    append_time(out, r.stored_ms);
    out += '\t';
    append_escaped(out, r.imei);
    out += '\t';
    if (r.codec)
      append_escaped(out, *r.codec);
    else
      out += "\\N";
    out += '\t';
    append_time(out, r.ts_ms);
    out += '\t';
    append_integer(out, r.priority);
    out += '\t';
    append_degrees(out, r.latitude_e7);
    out += '\t';
    append_degrees(out, r.longitude_e7);
    for (const std::int32_t v : {r.altitude, r.angle, r.satellites, r.speed, r.event_io}) {
      out += '\t';
      append_integer(out, v);
    }
    out += '\t';
    if (r.generation)
      append_integer(out, *r.generation);
    else
      out += "\\N";
    out += '\t';
    append_escaped(out, r.io);
    out += '\t';
    append_escaped(out, r.io_named);
    out += '\t';
    if (r.extra.empty())
      out += "\\N";
    else
      append_escaped(out, r.extra);
    out += '\n';
  }
  return out;
}

}  // namespace tgw::infra::sink
