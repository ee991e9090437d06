// Target::parse and Target::to_string (relax/support/target.h).
//
// The text form is a kind followed by options separated by spaces:
//   cpu -O2 -threads=4 -parallel-min-work=0 -no-runtime-checks -libs=none -mavx2 -mfma
//   cuda -arch=sm_80 -libs=cublas
// `-arch=sm_NN` (the GPU architecture; cuda only), `-threads=N`, `-parallel-min-work=N`, `-O<x>`, `-no-runtime-checks`, `-exact-float` and
// `-libs=a,b` (`-libs=none`: no library) set their fields; every other
// `-...` token is an ISA/compiler flag. ISA flags given in the text replace
// the default ("-march=native"); `-no-isa-flags` asks for none at all, so that
// every Target's isa_flags survive to_string -> parse. The compiler, cache
// directory and keep_source are not part of the text form (they say where
// and how to build, not what the code is for).
//
// CPU names are checked here, not when the compiler first runs (where a typo
// surfaced as an INTERNAL error quoting the compiler's option list): on x86-64
// `-march=` and `-mtune=` must name a CPU of kX86CpuNames (GCC's and Clang's
// names, up to GCC 14) or "native" (`-mtune=` also "generic" and "intel"), and
// `-mcpu=` is refused (GCC has no such x86 option); on AArch64 the architecture
// of `-march=` (before any `+extension`) must be one of kArmArchNames or
// "native". The table is data, not a compiler query, so that parsing stays a
// pure function in the runtime's floor library (no process spawned, nothing the
// deployment targets lack); a name a newer compiler learnt belongs in it. Other
// hosts' flags are passed on unchecked.
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
constexpr char kExactFloat[] = "-exact-float";
constexpr char kThreads[] = "-threads=";
constexpr char kParallelMinWork[] = "-parallel-min-work=";
constexpr char kLibs[] = "-libs=";
constexpr char kArch[] = "-arch=";
constexpr char kNoLibs[] = "none";

#if defined(__x86_64__)
// The CPU names GCC (up to 14) and Clang accept for -march= / -mtune= on x86-64.
constexpr const char* kX86CpuNames[] = {
    "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
    // Intel
    "nocona", "core2", "nehalem", "corei7", "westmere", "sandybridge", "corei7-avx", "ivybridge",
    "core-avx-i", "haswell", "core-avx2", "broadwell", "skylake", "skylake-avx512", "skx", "cannonlake",
    "icelake-client", "icelake", "rocketlake", "icelake-server", "cascadelake", "tigerlake", "cooperlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids", "alderlake",
    "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake", "pantherlake", "gracemont",
    "sierraforest", "grandridge", "clearwaterforest", "bonnell", "atom", "silvermont", "slm", "goldmont",
    "goldmont-plus", "tremont", "knl", "knm",
    // Zhaoxin and VIA
    "lujiazui", "yongfeng", "shijidadao", "eden-x2", "nano", "nano-1000", "nano-2000", "nano-3000", "nano-x2",
    "eden-x4", "nano-x4",
    // AMD
    "k8", "k8-sse3", "opteron", "opteron-sse3", "athlon64", "athlon64-sse3", "athlon-fx", "amdfam10",
    "barcelona", "bdver1", "bdver2", "bdver3", "bdver4", "znver1", "znver2", "znver3", "znver4", "znver5",
    "btver1", "btver2",
};
#endif

#if defined(__aarch64__)
// The architectures GCC and Clang accept for -march= on AArch64 (before `+extensions`).
constexpr const char* kArmArchNames[] = {
    "armv8-a",   "armv8.1-a", "armv8.2-a", "armv8.3-a", "armv8.4-a", "armv8.5-a", "armv8.6-a",
    "armv8.7-a", "armv8.8-a", "armv8.9-a", "armv9-a",   "armv9.1-a", "armv9.2-a", "armv9.3-a",
    "armv9.4-a", "armv9.5-a", "armv8-r",
};
#endif

template <size_t N>
bool listed(const char* const (&names)[N], std::string_view name) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

template <size_t N>
std::string listing(const char* const (&names)[N]) {
  return absl::StrJoin(names, ", ");
}

// Checks a `-march=`, `-mtune=` or `-mcpu=` flag of the host part (see the file comment).
absl::Status check_cpu_flag(const std::string& flag, const std::string& text) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos) return absl::OkStatus();
  const std::string option = flag.substr(0, eq + 1);
  const std::string value = flag.substr(eq + 1);
  if (option != "-march=" && option != "-mtune=" && option != "-mcpu=") return absl::OkStatus();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("target option \"", flag, "\" in \"", text, "\": ", why));
  };
  if (value.empty()) return bad(absl::StrCat("expected a CPU name after ", option, " (e.g. ", option, "native)"));
  if (value == "native") return absl::OkStatus();
#if defined(__x86_64__)
  if (option == "-mcpu=") {
    return bad("-mcpu= is not an x86-64 option; name the CPU with -march= (the instructions to use) or "
               "-mtune= (what to tune for)");
  }
  if (option == "-mtune=" && (value == "generic" || value == "intel")) return absl::OkStatus();
  if (!listed(kX86CpuNames, value)) {
    return bad(absl::StrCat("unknown x86-64 CPU \"", value, "\" for ", option, " (valid: native, ",
                            option == "-mtune=" ? "generic, intel, " : "", listing(kX86CpuNames), ")"));
  }
#elif defined(__aarch64__)
  if (option == "-march=") {
    const std::string arch = value.substr(0, value.find('+'));
    if (!listed(kArmArchNames, arch)) {
      return bad(absl::StrCat("unknown AArch64 architecture \"", arch, "\" for -march= (valid: native, ",
                              listing(kArmArchNames), ", each optionally followed by +extensions)"));
    }
  }
#endif
  return absl::OkStatus();
}

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
    } else if (t == kExactFloat) {
      target.exact_float = true;
    } else if (t == kNoIsaFlags) {
      no_isa = true;
    } else if (t.size() > 1 && t[0] == '-') {
      if (absl::Status s = check_cpu_flag(t, text); !s.ok()) return s;
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
  if (exact_float) absl::StrAppend(&s, " ", kExactFloat);
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
