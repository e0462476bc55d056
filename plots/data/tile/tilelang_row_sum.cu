// The CUDA TileLang 0.1.15 generated for kernels/tilelang/row_sum.py at M x N = 1048576 x 256, float32 (kernel.get_kernel_source()).
#if defined(_MSC_VER) && !defined(__clang__) && _MSC_VER < 1940
#define _tl_orig_alignas alignas
#define alignas(N) _tl_orig_alignas((N) <= 64 ? (N) : 64)
#include <cuda.h>
#undef alignas
#define alignas _tl_orig_alignas
#endif
#include <tl_templates/cuda/reduce.h>
#include <tl_templates/cuda/scan.h>
#include <tl_templates/cuda/ldsm.h>
#include <tl_templates/cuda/threadblock_swizzle.h>
#include <tl_templates/cuda/debug.h>
#ifdef ENABLE_BF16
#include <tl_templates/cuda/cuda_bf16_fallbacks.cuh>
#endif

extern "C" __global__ void kernel_kernel(const float* __restrict__ A, float* __restrict__ S);
extern "C" __global__ void __launch_bounds__(128, 1) kernel_kernel(const float* __restrict__ A, float* __restrict__ S) {
  float acc[8];
  float tile[32];
  float part[8];
  extern __shared__ __align__(1024) float workspace[];
  #pragma unroll
  for (int i = 0; i < 2; ++i) {
    float broadcast_var = 0x0p+0f/*0.000000e+00*/;
    *(float4*)(acc + (i * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
  }
  #pragma unroll
  for (int i_1 = 0; i_1 < 8; ++i_1) {
    *(float4*)(tile + (i_1 * 4)) = *(float4*)(A + (((((int)blockIdx.x) * 4096) + (i_1 * 512)) + (((int)threadIdx.x) * 4)));
  }
  #pragma unroll
  for (int i_2 = 0; i_2 < 8; ++i_2) {
    part[i_2] = 0x0p+0f/*0.000000e+00*/;
    #pragma unroll
    for (int rv = 0; rv < 4; ++rv) {
      part[i_2] = (part[i_2] + tile[((i_2 * 4) + rv)]);
    }
    __syncthreads();
    part[i_2] = tl::AllReduce<tl::SumOp, 64, 1, 0, tl::NamedBarrier<128>>::run(part[i_2], (&(workspace[0])));
  }
  #pragma unroll
  for (int i_3 = 0; i_3 < 2; ++i_3) {
    float4 __1;
      float4 v_ = *(float4*)(acc + (i_3 * 4));
      float4 v__1 = *(float4*)(part + (i_3 * 4));
      __1.x = (v_.x+v__1.x);
      __1.y = (v_.y+v__1.y);
      __1.z = (v_.z+v__1.z);
      __1.w = (v_.w+v__1.w);
    *(float4*)(acc + (i_3 * 4)) = __1;
  }
  if ((((int)threadIdx.x) % 64) == 0) {
    #pragma unroll
    for (int i_4 = 0; i_4 < 8; ++i_4) {
      S[(((((int)blockIdx.x) * 16) + (i_4 * 2)) + (((int)threadIdx.x) >> 6))] = acc[i_4];
    }
  }
}

