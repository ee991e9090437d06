// Target::parse and Target::to_string (relax/support/target.h).
//
// The text form is a kind followed by options separated by spaces:
//   cpu -O2 -threads=4 -parallel-min-work=0 -no-runtime-checks -libs=none -mavx2 -mfma
//   cuda -arch=sm_80 -libs=cublas
// `-arch=sm_NN` (the GPU architecture; cuda only), `-threads=N`, `-parallel-min-work=N`, `-O<x>`, `-no-runtime-checks` and
// `-libs=a,b` (`-libs=none`: no library) set their fields; every other
// `-...` token is an ISA/compiler flag. ISA flags given in the text replace
// the default ("-march=native"); `-no-isa-flags` asks for none at all, so that
// every Target's isa_flags survive to_string -> parse. The compiler, cache
// directory and keep_source are not part of the text form (they say where
// and how to build, not what the code is for).
#include "relax/support/target.h"

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace relax {
namespace {

constexpr char kNoIsaFlags[] = "-no-isa-flags";
constexpr char kNoRuntimeChecks[] = "-no-runtime-checks";
constexpr char kThreads[] = "-threads=";
constexpr char kParallelMinWork[] = "-parallel-min-work=";
constexpr char kLibs[] = "-libs=";
constexpr char kArch[] = "-arch=";
constexpr char kNoLibs[] = "none";

}  // namespace

std::vector<std::string> Target::default_libraries(const std::string& kind) {
  if (kind == "cuda") {
#if defined(RELAX_WITH_CUDA)
    return {"cublas", "cudnn"};
#else
    return {};
#endif
  }
#if defined(RELAX_WITH_ONEDNN)
  return {"onednn"};
#else
  return {};
#endif
}

namespace {

// The libraries of a `-libs=` option's value: a comma list of names, or "none".
absl::StatusOr<std::vector<std::string>> parse_libraries(const std::string& option, const std::string& value) {
  if (value == kNoLibs) return std::vector<std::string>{};
  std::vector<std::string> libraries = absl::StrSplit(value, ',');
  for (const std::string& library : libraries) {
    if (library.empty() || library == kNoLibs) {
      return absl::InvalidArgumentError(absl::StrCat("target option \"", option,
                                                     "\": expected library names separated by commas "
                                                     "(e.g. -libs=onednn) or -libs=none"));
    }
  }
  return libraries;
}

}  // namespace

absl::StatusOr<Target> Target::parse(const std::string& text) {
  std::vector<std::string> tokens = absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (tokens.empty()) return absl::InvalidArgumentError("empty target text (expected \"cpu\" and options)");
  Target target;
  if (tokens[0] != "cpu" && tokens[0] != "llvm" && tokens[0] != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target kind \"", tokens[0], "\" in \"", text, "\" (known: cpu, llvm, cuda)"));
  }
  target.kind = tokens[0] == "cuda" ? "cuda" : "cpu";
  target.libraries = default_libraries(target.kind);
  bool isa_given = false;
  bool no_isa = false;
  std::vector<std::string> isa_flags;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.rfind(kThreads, 0) == 0) {
      const std::string number = t.substr(sizeof(kThreads) - 1);
      int32_t threads = 0;
      if (!absl::SimpleAtoi(number, &threads) || threads < 0) {
        return absl::InvalidArgumentError(absl::StrCat("target option \"", t,
                                                       "\": the thread count must be an integer >= 0"));
      }
      target.threads = threads;
    } else if (t.rfind(kParallelMinWork, 0) == 0) {
      const std::string number = t.substr(sizeof(kParallelMinWork) - 1);
      int64_t work = 0;
      if (!absl::SimpleAtoi(number, &work) || work < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "target option \"", t, "\": the parallel work threshold must be an integer >= 0"));
      }
      target.parallel_min_work = work;
    } else if (t.rfind(kLibs, 0) == 0) {
      absl::StatusOr<std::vector<std::string>> libraries = parse_libraries(t, t.substr(sizeof(kLibs) - 1));
      if (!libraries.ok()) return libraries.status();
      target.libraries = *std::move(libraries);
    } else if (t.rfind(kArch, 0) == 0) {
      const std::string arch = t.substr(sizeof(kArch) - 1);
      int32_t number = 0;
      if (!target.is_cuda()) {
        return absl::InvalidArgumentError(absl::StrCat("target option \"", t, "\" in \"", text,
                                                       "\": -arch= is an option of the cuda kind"));
      }
      if (arch.rfind("sm_", 0) != 0 || !absl::SimpleAtoi(arch.substr(3), &number) || number < 50) {
        return absl::InvalidArgumentError(absl::StrCat("target option \"", t,
                                                       "\": expected a GPU architecture sm_<NN> (sm_80, sm_90)"));
      }
      target.cuda_arch = arch;
    } else if (t.size() >= 3 && t.rfind("-O", 0) == 0) {
      target.opt_level = t;
    } else if (t == kNoRuntimeChecks) {
      target.runtime_checks = false;
    } else if (t == kNoIsaFlags) {
      no_isa = true;
    } else if (t.size() > 1 && t[0] == '-') {
      isa_given = true;
      isa_flags.push_back(t);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("target option \"", t, "\" in \"", text,
                                                     "\" does not start with '-'"));
    }
  }
  if (no_isa && isa_given) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", text, "\" has both ", kNoIsaFlags, " and ISA flags"));
  }
  if (no_isa) target.isa_flags.clear();
  if (isa_given) target.isa_flags = std::move(isa_flags);
  return target;
}

std::string Target::to_string() const {
  std::string s = kind == "llvm" ? "cpu" : kind;
  if (is_cuda()) absl::StrAppend(&s, " ", kArch, cuda_arch);
  if (opt_level != "-O3") absl::StrAppend(&s, " ", opt_level);
  if (threads != 0) absl::StrAppend(&s, " ", kThreads, threads);
  if (parallel_min_work != Target().parallel_min_work) {
    absl::StrAppend(&s, " ", kParallelMinWork, parallel_min_work);
  }
  if (!runtime_checks) absl::StrAppend(&s, " ", kNoRuntimeChecks);
  if (libraries != default_libraries(kind == "llvm" ? "cpu" : kind)) {
    absl::StrAppend(&s, " ", kLibs, libraries.empty() ? kNoLibs : absl::StrJoin(libraries, ","));
  }
  if (isa_flags.empty()) {
    absl::StrAppend(&s, " ", kNoIsaFlags);
  } else if (isa_flags != Target().isa_flags) {
    for (const std::string& flag : isa_flags) absl::StrAppend(&s, " ", flag);
  }
  return s;
}

std::string Target::isa_level() const {
  constexpr std::string_view kMarch = "-march=";
  std::string level;
  for (const std::string& flag : isa_flags) {
    if (flag.rfind(kMarch, 0) == 0) level = flag.substr(kMarch.size());
  }
  return level;
}

}  // namespace relax
