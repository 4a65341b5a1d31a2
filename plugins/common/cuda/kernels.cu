/* kernels.cu: the CUDA C++ source of cuda_gemm's kernels (see cgemm.h), embedded
 * as cgemm_source by the build (compiled at run time by NVRTC). Compile-time parameters: BM, BN, BK, WM, WN,
 * STAGES, VEC, DT (0 float, 1 half, 2 bfloat16); REFERENCE builds the
 * reference kernel only. Row-major A (M x K), B (K x N), C (M x N) fp32,
 * M, N multiples of BM, BN and K of BK (the session pads them to the
 * configuration's block tile and K step, within buffers of leading
 * dimensions lda (A) and ldb (B, C and each split-K slice of W). */
#if DT == 1
#include <cuda_fp16.h>
typedef __half T;
#elif DT == 2
#include <cuda_bf16.h>
typedef __nv_bfloat16 T;
#else
typedef float T;
#endif

__device__ __forceinline__ float to_f(float x) { return x; }
#if DT == 1
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
#elif DT == 2
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
#endif

#ifdef REFERENCE
/* R = C0 (when accumulating) + A*B and G = sum |a||b|, in double. */
extern "C" __global__ void reference(const T *A, const T *B, const float *C0, double *R,
                                     double *G, int m, int n, int k, int lda, int ldb, int ldc) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
  if (col >= n) return;
  double s = 0, g = 0;
  for (int i = 0; i < k; i++) {
    double p = (double)to_f(A[(size_t)row * lda + i]) * (double)to_f(B[(size_t)i * ldb + col]);
    s += p;
    g += p < 0 ? -p : p;
  }
  R[(size_t)row * n + col] = s + (C0 ? (double)C0[(size_t)row * ldc + col] : 0.0);
  G[(size_t)row * n + col] = g;
}
#else
#if DT != 0
#include <mma.h>
using namespace nvcuda;
#endif
#define NWN (BN / WN)
#define NT ((BM / WM) * (BN / WN) * 32)
#define PAD (16 / (int)sizeof(T))
#define LDA (BK + PAD)
#define LDB (BN + PAD)
#define VB (VEC * (int)sizeof(T))

__device__ __forceinline__ void cp_async(void *smem, const void *gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(VB));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void load_tile(T *as, T *bs, const T *A, const T *B, int m0, int n0,
                                          int k0, int lda, int ldb, int tid) {
#pragma unroll
  for (int i = tid * VEC; i < BM * BK; i += NT * VEC) {
    int r = i / BK, c = i % BK;
    cp_async(&as[r * LDA + c], &A[(size_t)(m0 + r) * lda + k0 + c]);
  }
#pragma unroll
  for (int i = tid * VEC; i < BK * BN; i += NT * VEC) {
    int r = i / BN, c = i % BN;
    cp_async(&bs[r * LDB + c], &B[(size_t)(k0 + r) * ldb + n0 + c]);
  }
}

/* Block (bid, slice): the BM x BN tile chosen by the swizzle (groups of
 * `swizzle` block rows walk N together, for L2 reuse), over K slice
 * `slice` of `splitk`. splitk 1 writes C (adding C's value when
 * accumulating); else slice s writes W[s] (slice 0 adding C; slices
 * `wstride` elements apart) and the reduce kernel sums the slices into C. */
extern "C" __global__ void __launch_bounds__(NT)
    gemm(const T *__restrict__ A, const T *__restrict__ B, float *C, float *W, int M, int N,
         int K, int lda, int ldb, long long wstride, int accumulate, int splitk, int swizzle) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T *as = (T *)smem_raw;
  T *bs = as + STAGES * BM * LDA;
  const int gm = M / BM, gn = N / BN, bid = blockIdx.x;
  const int group = swizzle * gn, first = (bid / group) * swizzle;
  const int rows = gm - first < swizzle ? gm - first : swizzle;
  const int m0 = (first + (bid % group) % rows) * BM, n0 = ((bid % group) / rows) * BN;
  const int slice = blockIdx.z, kper = K / splitk, kbeg = slice * kper, ntiles = kper / BK;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm0 = (warp / NWN) * WM, wn0 = (warp % NWN) * WN;
  float *out = splitk == 1 ? C : W + (size_t)slice * wstride;
  const int init_c = accumulate && slice == 0;
#if DT == 0
  /* SIMT: the warp's lanes as 4 rows x 8 columns, each with a TM x TN
   * strided sub-tile (conflict-free shared reads). */
#define TM (WM / 4)
#define TN (WN / 8)
  const int tr = lane / 8, tc = lane % 8;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++)
      acc[i][j] = init_c ? C[(size_t)(m0 + wm0 + i * 4 + tr) * ldb + n0 + wn0 + j * 8 + tc] : 0.f;
#else
#define FM (WM / 16)
#define FN (WN / 16)
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++) {
      if (init_c)
        wmma::load_matrix_sync(acc[i][j], C + (size_t)(m0 + wm0 + i * 16) * ldb + n0 + wn0 + j * 16,
                               ldb, wmma::mem_row_major);
      else
        wmma::fill_fragment(acc[i][j], 0.f);
    }
#endif
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ntiles)
      load_tile(as + s * BM * LDA, bs + s * BK * LDB, A, B, m0, n0, kbeg + s * BK, lda, ldb, tid);
    cp_commit();
  }
  for (int t = 0; t < ntiles; t++) {
    const int pre = t + STAGES - 1;
    if (pre < ntiles)
      load_tile(as + (pre % STAGES) * BM * LDA, bs + (pre % STAGES) * BK * LDB, A, B, m0, n0,
                kbeg + pre * BK, lda, ldb, tid);
    cp_commit();
    cp_wait<STAGES - 1>();
    __syncthreads();
    const T *a_s = as + (t % STAGES) * BM * LDA, *b_s = bs + (t % STAGES) * BK * LDB;
#if DT == 0
#pragma unroll 4
    for (int k = 0; k < BK; k++) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i++)
        a[i] = a_s[(wm0 + i * 4 + tr) * LDA + k];
#pragma unroll
      for (int j = 0; j < TN; j++)
        b[j] = b_s[k * LDB + wn0 + j * 8 + tc];
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
#else
#pragma unroll
    for (int k = 0; k < BK; k += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[FN];
#pragma unroll
      for (int i = 0; i < FM; i++)
        wmma::load_matrix_sync(fa[i], a_s + (wm0 + i * 16) * LDA + k, LDA);
#pragma unroll
      for (int j = 0; j < FN; j++)
        wmma::load_matrix_sync(fb[j], b_s + k * LDB + wn0 + j * 16, LDB);
#pragma unroll
      for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
          wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
#endif
    __syncthreads();
  }
#if DT == 0
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++)
      out[(size_t)(m0 + wm0 + i * 4 + tr) * ldb + n0 + wn0 + j * 8 + tc] = acc[i][j];
#else
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::store_matrix_sync(out + (size_t)(m0 + wm0 + i * 16) * ldb + n0 + wn0 + j * 16,
                              acc[i][j], ldb, wmma::mem_row_major);
#endif
}

/* C = sum over the splitk slices of W (slices wstride apart), over the
 * M x N part of leading dimension ld. */
extern "C" __global__ void reduce(const float *W, float *C, int M, int N, int ld,
                                  long long wstride, int splitk) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)M * N) return;
  size_t at = (i / N) * ld + i % N;
  float s = 0.f;
  for (int z = 0; z < splitk; z++)
    s += W[(size_t)z * wstride + at];
  C[at] = s;
}
#endif
