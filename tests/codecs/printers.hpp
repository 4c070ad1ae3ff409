#pragma once

#include <ostream>

#include "codecs/avl_encode.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"
#include "codecs/tcp_framer.hpp"
#include "tests/codecs/hex.hpp"

// GoogleTest printers, so that failures name codes and show values instead of raw
// bytes. Every test file that compares these types includes this header, so all of
// them instantiate the same printers.
namespace tgw::codecs {

inline void PrintTo(errc code, std::ostream* os) {
  *os << to_string(code);
}

inline void PrintTo(codec_id codec, std::ostream* os) {
  *os << "codec " << codec_name(static_cast<std::uint8_t>(codec));
}

inline void PrintTo(frame_kind kind, std::ostream* os) {
  switch (kind) {
    case frame_kind::imei:
      *os << "imei";
      return;
    case frame_kind::keepalive:
      *os << "keepalive";
      return;
    case frame_kind::avl:
      *os << "avl";
      return;
    case frame_kind::command:
      *os << "command";
      return;
  }
  *os << "frame_kind(" << static_cast<int>(kind) << ")";
}

inline void PrintTo(const io_value& v, std::ostream* os) {
  *os << "{id " << v.id << " width " << int{v.width} << " value " << v.value;
  if (v.width == 0) *os << " bytes " << test::to_hex(v.bytes);
  *os << "}";
}

inline void PrintTo(const avl_record_data& r, std::ostream* os) {
  *os << "{ts " << r.timestamp_ms << " pri " << int{r.priority} << " lon " << r.longitude << " lat "
      << r.latitude << " alt " << r.altitude << " angle " << r.angle << " sat " << int{r.satellites}
      << " speed " << r.speed << " event " << r.event_io_id << " gen " << int{r.generation_type}
      << " io [";
  for (const io_value& v : r.io) PrintTo(v, os);
  *os << "]}";
}

}  // namespace tgw::codecs
