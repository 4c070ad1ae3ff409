#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace tgw::infra {

/// Rows of text in aligned columns, for people: each column as wide as its widest
/// cell (in characters of UTF-8), two spaces between, no trailing blanks. Cells must
/// be terminal-safe already (terminal_safe).
class text_table {
 public:
  explicit text_table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] std::size_t size() const noexcept { return rows_.size() - 1; }
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tgw::infra
