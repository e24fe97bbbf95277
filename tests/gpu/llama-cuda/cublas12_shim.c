/* libcublas.so.12 -> libcublas.so.13 forwarding shim.
 *
 * Debian sid's libggml-cuda.so (ggml 0.27.0, built with CUDA 12.4) needs libcublas.so.12; the H200
 * device machine has CUDA 13 only (libcublas.so.13). This library carries the soname libcublas.so.12
 * and the symbol version node `libcublas.so.12` that libggml-cuda.so asks for (objdump -T shows
 * `(libcublas.so.12) cublasGemmEx` etc.), and forwards each function it exports, unchanged, to the same
 * name in libcublas.so.13: every exported symbol is a one-instruction trampoline `jmp *ptr(%rip)`, the
 * pointers filled by dlsym in a constructor, so the arguments, whatever they are, pass through
 * untouched. The 13 functions are exactly the ones libggml-cuda.so 0.27.0 imports from cuBLAS (see
 * cublas12.syms); their prototypes did not change between cuBLAS 12 and 13.
 *
 * FLASHPROOF_CUBLAS13 names the library to forward to (default "libcublas.so.13", found through the
 * library path). At load it prints one line to stderr saying what it forwards to, or which symbol is
 * missing; a missing symbol aborts the process at its first call, naming it.
 *
 * Build: gcc -shared -fPIC -O2 -o libcublas.so.12 cublas12_shim.c -Wl,-soname,libcublas.so.12 \
 *          -Wl,--version-script=cublas12.map -ldl
 * x86-64 only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

#define FP_CUBLAS_SYMS(X) \
  X(cublasCreate_v2)      \
  X(cublasDestroy_v2)     \
  X(cublasGetStatusString) \
  X(cublasSetStream_v2)   \
  X(cublasSetWorkspace_v2) \
  X(cublasSetMathMode)    \
  X(cublasSgemm_v2)       \
  X(cublasSgemmBatched)   \
  X(cublasSgemmStridedBatched) \
  X(cublasGemmEx)         \
  X(cublasGemmBatchedEx)  \
  X(cublasGemmStridedBatchedEx) \
  X(cublasStrsmBatched)

/* The pointer table, hidden so the trampolines reach it PC-relative without a GOT. */
#define FP_PTR(name) __attribute__((visibility("hidden"))) void* fp_ptr_##name;
FP_CUBLAS_SYMS(FP_PTR)

/* One trampoline per symbol. */
#define FP_TRAMP(name)                                   \
  __asm__(".text\n"                                      \
          ".globl " #name "\n"                           \
          ".type " #name ", @function\n"                 \
          ".p2align 4\n" #name ":\n"                     \
          "  jmp *fp_ptr_" #name "(%rip)\n"              \
          ".size " #name ", .-" #name "\n");
FP_CUBLAS_SYMS(FP_TRAMP)

/* Reached through a pointer whose symbol cuBLAS 13 lacks: name it and stop. */
#define FP_MISSING(name)                                                                          \
  static void fp_missing_##name(void) {                                                           \
    fprintf(stderr, "flashproof cublas shim: %s is not in the cuBLAS 13 library; aborting\n", #name); \
    abort();                                                                                      \
  }
FP_CUBLAS_SYMS(FP_MISSING)

__attribute__((constructor)) static void fp_cublas_shim_init(void) {
  const char* target = getenv("FLASHPROOF_CUBLAS13");
  if (!target || !*target) target = "libcublas.so.13";
  void* h = dlopen(target, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "flashproof cublas shim: cannot open %s: %s\n", target, dlerror());
  }
  int found = 0, missing = 0;
#define FP_RESOLVE(name)                                               \
  {                                                                    \
    void* p = h ? dlsym(h, #name) : NULL;                              \
    if (p) {                                                           \
      fp_ptr_##name = p;                                               \
      ++found;                                                         \
    } else {                                                           \
      fp_ptr_##name = (void*)&fp_missing_##name;                       \
      ++missing;                                                       \
      fprintf(stderr, "flashproof cublas shim: %s missing in %s\n", #name, target); \
    }                                                                  \
  }
  FP_CUBLAS_SYMS(FP_RESOLVE)
  const char* where = target;
  struct link_map* lm = NULL;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) where = lm->l_name;
  fprintf(stderr, "flashproof cublas shim: libcublas.so.12 -> %s (%d symbols forwarded, %d missing)\n",
          where, found, missing);
}
