// The pass registry and the pipeline text (relax/transform/pass_registry.h).
//
// The registry is pass infrastructure: it links no pass. The built-in passes'
// table (src/transform/pass_table.cc) hands itself in through
// set_builtin_pass_table, which relax/transform/builtin_passes.h calls for every
// program that includes it, and is read on first use; user passes are added by
// register_pass. The infos are kept in a deque so that find_pass_info can hand
// out pointers that stay valid while users register more passes (the built-in
// ones, read late, go in front: a deque keeps references on push_front).
#include "relax/transform/pass_registry.h"

#include <atomic>
#include <cctype>
#include <deque>
#include <mutex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace relax::transform {
namespace {

struct Entry {
  PassInfo info;
  PassFactory factory;
};

/// The built-in table, once handed in. Constant-initialized, so the table's anchor can set it
/// during static initialization in any order.
std::atomic<BuiltinPassTable> g_builtin_table{nullptr};

struct Registry {
  std::mutex mutex;
  std::deque<Entry> entries;
  size_t builtins = 0;  ///< entries[0, builtins) are the built-in table's
  bool builtins_read = false;

  /// Reads the built-in table into the front of `entries` the first time it is there (after
  /// static initialization: making a pass may read other tables). Called with `mutex` held.
  void read_builtins() {
    if (builtins_read) return;
    const BuiltinPassTable table = g_builtin_table.load();
    if (table == nullptr) return;
    builtins_read = true;
    const std::vector<PassFactory>& factories = table();
    for (size_t i = factories.size(); i-- > 0;) {
      PassPtr pass = factories[i]();
      entries.push_front({pass->info(), factories[i]});
    }
    builtins = factories.size();
  }
};

/// The registry with the built-in table read, locked by the caller.
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: passes may be created at exit
  return *r;
}

const Entry* find_entry(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.read_builtins();
  for (const Entry& e : r.entries) {
    if (e.info.name == name) return &e;
  }
  return nullptr;
}

bool is_kebab_case(std::string_view name) {
  if (name.empty() || !std::islower(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return name.back() != '-';
}

std::string known_names() {
  std::vector<std::string> names;
  for (const PassInfo& info : list_passes()) names.push_back(info.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

bool set_builtin_pass_table(BuiltinPassTable table) {
  g_builtin_table.store(table);
  return true;
}

std::vector<PassInfo> list_passes() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.read_builtins();
  std::vector<PassInfo> out;
  for (const Entry& e : r.entries) out.push_back(e.info);
  return out;
}

const PassInfo* find_pass_info(std::string_view name) {
  const Entry* e = find_entry(name);
  return e == nullptr ? nullptr : &e->info;
}

absl::StatusOr<PassPtr> create_pass(std::string_view name) {
  const Entry* e = find_entry(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown pass `", std::string(name), "`; known passes: ", known_names()));
  }
  return e->factory();
}

absl::Status register_pass(PassFactory factory) {
  PassPtr pass = factory();
  const std::string& name = pass->name();
  if (!is_kebab_case(name) || name == "fixed-point" || name == "sequence") {
    return absl::InvalidArgumentError(absl::StrCat(
        "register_pass: `", name, "` is not a pass name (kebab-case: lower-case letters, digits and '-'; "
        "not fixed-point or sequence)"));
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.read_builtins();
  for (const Entry& e : r.entries) {
    if (e.info.name == name) return absl::AlreadyExistsError(absl::StrCat("register_pass: a pass `", name, "` exists"));
  }
  r.entries.push_back({pass->info(), std::move(factory)});
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Pipeline text.

namespace {

class PipelineParser {
 public:
  explicit PipelineParser(std::string_view text) : text_(text) {}

  absl::StatusOr<PassManager> parse() {
    skip_space();
    if (pos_ == text_.size()) return error("the pipeline is empty");
    absl::StatusOr<std::vector<PassPtr>> passes = parse_list();
    if (!passes.ok()) return passes.status();
    if (pos_ != text_.size()) return error(absl::StrCat("expected `,` or the end, found `", std::string(1, text_[pos_]), "`"));
    return PassManager(*std::move(passes));
  }

 private:
  absl::StatusOr<std::vector<PassPtr>> parse_list() {
    std::vector<PassPtr> out;
    while (true) {
      absl::StatusOr<PassPtr> item = parse_item();
      if (!item.ok()) return item.status();
      out.push_back(*std::move(item));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        skip_space();
        continue;
      }
      return out;
    }
  }

  absl::StatusOr<PassPtr> parse_item() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '-' || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string_view name = text_.substr(start, pos_ - start);
    if (name.empty()) {
      return error(pos_ == text_.size() ? std::string("expected a pass name, found the end")
                                        : absl::StrCat("expected a pass name, found `", std::string(1, text_[pos_]), "`"));
    }
    if (name == "fixed-point" || name == "sequence") return parse_group(name, start);
    absl::StatusOr<PassPtr> pass = create_pass(name);
    if (!pass.ok()) return error_at(start, std::string(pass.status().message()));
    return pass;
  }

  absl::StatusOr<PassPtr> parse_group(std::string_view name, size_t start) {
    int max_iterations = kDefaultFixedPointIterations;
    if (name == "fixed-point" && pos_ < text_.size() && text_[pos_] == '{') {
      size_t close = text_.find('}', pos_);
      if (close == std::string_view::npos) return error("expected `}`");
      std::string_view option = text_.substr(pos_ + 1, close - pos_ - 1);
      constexpr std::string_view kKey = "max-iterations=";
      if (option.substr(0, kKey.size()) != kKey || !absl::SimpleAtoi(std::string(option.substr(kKey.size())), &max_iterations) ||
          max_iterations < 1) {
        return error(absl::StrCat("expected {max-iterations=N} with N >= 1, found {", std::string(option), "}"));
      }
      pos_ = close + 1;
    }
    if (pos_ >= text_.size() || text_[pos_] != '(') {
      return error_at(start, absl::StrCat("`", std::string(name), "` takes a parenthesised list of passes"));
    }
    ++pos_;
    skip_space();
    absl::StatusOr<std::vector<PassPtr>> passes = parse_list();
    if (!passes.ok()) return passes.status();
    if (pos_ >= text_.size() || text_[pos_] != ')') return error("expected `)`");
    ++pos_;
    if (name == "sequence") return sequence(*std::move(passes));
    return fixed_point(*std::move(passes), max_iterations);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  absl::Status error(const std::string& message) const { return error_at(pos_, message); }
  absl::Status error_at(size_t pos, const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat("pipeline:", pos + 1, ": ", message));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string escape_cell(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}}); }

}  // namespace

absl::StatusOr<PassManager> parse_pipeline(std::string_view text) { return PipelineParser(text).parse(); }

std::string pass_table_markdown() {
  std::string out =
      "| pass | what it does | options (default) | statistics |\n"
      "| --- | --- | --- | --- |\n";
  std::vector<PassFactory> builtins;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.read_builtins();
    for (size_t i = 0; i < r.builtins; ++i) builtins.push_back(r.entries[i].factory);
  }
  for (const PassFactory& factory : builtins) {
    PassPtr pass = factory();
    const PassInfo& info = pass->info();
    std::vector<std::string> options;
    for (const PassOption& o : info.options) {
      options.push_back(absl::StrCat("`", o.name, "` (", option_value_to_string(o.default_value), "): ", o.summary));
    }
    std::vector<std::string> stats;
    for (const PassStatistic& s : info.statistics) stats.push_back(absl::StrCat("`", s.name, "`"));
    absl::StrAppend(&out, "| `", info.name, "` | ", escape_cell(info.summary), " | ",
                    options.empty() ? "" : escape_cell(absl::StrJoin(options, "; ")), " | ",
                    absl::StrJoin(stats, ", "), " |\n");
  }
  return out;
}

}  // namespace relax::transform
