/* flowcl's kernel vocabulary in CUDA C++ for NVRTC (docs/extending.md, "What a kernel may use").
 * The CUDA backend puts this text before every program it compiles, as the OpenCL backend puts
 * kernels/prelude_opencl.h: the same kernel text then reads as CUDA C++. Beyond the FCL_ names it
 * defines what OpenCL C has built in and CUDA lacks: the work-item functions, OpenCL's type
 * names, the arithmetic of vector types, vector loads and stores, conversions and the built-in
 * functions that src/codegen/builtins.c admits under their OpenCL names. Compiled with
 * -default-device, so that a kernel's plain helper functions are device functions.
 *
 * Where CUDA differs in memory: OpenCL's 3-lane vectors take 4 lanes of memory, CUDA's 3 (no
 * kernel of flowcl's keeps 3-lane vectors in memory); 8- and 16-lane vectors are flowcl's own
 * structs, aligned as OpenCL aligns them. */
#ifndef FCL_PRELUDE_CUDA
#define FCL_PRELUDE_CUDA

/* ---- the vocabulary (kernels/prelude_opencl.h defines the same names) ---- */
/* C++ linkage: a kernel's symbol spells its parameters' types, which the CUDA backend reads for
 * the argument checks (CUDA's driver reports only their sizes). */
#define FCL_KERNEL __global__
#define FCL_GROUP_SIZE(x, y, z) __launch_bounds__((x) * (y) * (z))
#define FCL_GLOBAL
#define FCL_CONSTANT
#define FCL_LOCAL __shared__
#define FCL_LOCAL_PTR
#define FCL_BARRIER_LOCAL() __syncthreads()

/* Local memory sized by the host: the backend lays the kernel's local parameters one after the
 * other in the launch's dynamic shared memory and passes each one's byte offset. */
extern __shared__ __align__(16) unsigned char fcl__dynamic_shared[];
template <typename T>
struct fcl__local_param {
  unsigned offset;
  __device__ __forceinline__ operator T *() const { return (T *)(fcl__dynamic_shared + offset); }
  __device__ __forceinline__ T &operator[](long i) const { return ((T *)*this)[i]; }
};
#define FCL_LOCAL_PARAM(type, name) fcl__local_param<type> name

/* ---- OpenCL C's names ---- */
#define restrict __restrict__
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned long size_t;
typedef long ptrdiff_t;
#define M_E 2.718281828459045
#define M_LOG2E 1.4426950408889634
#define M_LOG10E 0.4342944819032518
#define M_LN2 0.6931471805599453
#define M_LN10 2.302585092994046
#define M_PI 3.141592653589793
#define M_PI_2 1.5707963267948966
#define M_PI_4 0.7853981633974483
#define M_1_PI 0.3183098861837907
#define M_2_PI 0.6366197723675814
#define M_2_SQRTPI 1.1283791670955126
#define M_SQRT2 1.4142135623730951
#define M_SQRT1_2 0.7071067811865476
#define M_E_F 2.718281828f
#define M_LOG2E_F 1.442695041f
#define M_LOG10E_F 0.434294482f
#define M_LN2_F 0.693147181f
#define M_LN10_F 2.302585093f
#define M_PI_F 3.141592654f
#define M_PI_2_F 1.570796327f
#define M_PI_4_F 0.785398163f
#define M_1_PI_F 0.318309886f
#define M_2_PI_F 0.636619772f
#define M_2_SQRTPI_F 1.128379167f
#define M_SQRT2_F 1.414213562f
#define M_SQRT1_2_F 0.707106781f
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define HUGE_VALF INFINITY
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#define MAXFLOAT 3.402823466e+38f
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
#define FLT_EPSILON 1.192092896e-07f
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.220446049250313e-16
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)

/* Work-item functions: launches have no global offset, and their global size is the grid's. */
__device__ __forceinline__ size_t fcl__dim(const uint3 &v, uint d) {
  return d == 0 ? v.x : d == 1 ? v.y : d == 2 ? v.z : 0;
}
__device__ __forceinline__ size_t get_local_id(uint d) { return fcl__dim(threadIdx, d); }
__device__ __forceinline__ size_t get_group_id(uint d) { return fcl__dim(blockIdx, d); }
__device__ __forceinline__ size_t get_local_size(uint d) {
  return d < 3 ? fcl__dim(make_uint3(blockDim.x, blockDim.y, blockDim.z), d) : 1;
}
__device__ __forceinline__ size_t get_num_groups(uint d) {
  return d < 3 ? fcl__dim(make_uint3(gridDim.x, gridDim.y, gridDim.z), d) : 1;
}
__device__ __forceinline__ size_t get_global_id(uint d) {
  return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
__device__ __forceinline__ size_t get_global_size(uint d) {
  return get_num_groups(d) * get_local_size(d);
}
__device__ __forceinline__ uint get_work_dim() {
  return gridDim.z * blockDim.z > 1 ? 3 : gridDim.y * blockDim.y > 1 ? 2 : 1;
}

/* ---- vector types: CUDA's 2- and 4-lane ones (double4 aligned on 32 bytes, as OpenCL's), flowcl's
 * 8 and 16 lanes ---- */
#define double4 double4_32a
#define FCL__WIDE(E, N, A)                                                                         \
  struct __align__(A) E##N {                                                                       \
    E s[N];                                                                                        \
  };
FCL__WIDE(float, 8, 32)
FCL__WIDE(float, 16, 64)
FCL__WIDE(double, 8, 64)
FCL__WIDE(double, 16, 128)
FCL__WIDE(int, 8, 32)
FCL__WIDE(int, 16, 64)
FCL__WIDE(uint, 8, 32)
FCL__WIDE(uint, 16, 64)
#undef FCL__WIDE

/* A vector's element type and width. */
template <typename V>
struct fcl__vec;
#define FCL__VEC(V, E, N)                                                                          \
  template <>                                                                                      \
  struct fcl__vec<V> {                                                                             \
    typedef E elem;                                                                                \
    enum { n = N };                                                                                \
  };
#define FCL__VECS(E, P)                                                                            \
  FCL__VEC(P##2, E, 2)                                                                             \
  FCL__VEC(P##3, E, 3) FCL__VEC(P##4, E, 4) FCL__VEC(P##8, E, 8) FCL__VEC(P##16, E, 16)
FCL__VECS(float, float)
FCL__VECS(double, double)
FCL__VECS(int, int)
FCL__VECS(uint, uint)
#undef FCL__VECS
#undef FCL__VEC

/* Lane i of any vector: CUDA's types by their members, flowcl's wide ones by their array (with
 * the index a constant once inlined and unrolled, either stays in registers; a cast to an array
 * of lanes kept the spectral kernels' float2 values in local memory). */
template <typename V>
__device__ __forceinline__ typename fcl__vec<V>::elem &fcl__lane(V &v, int i) {
  if constexpr (fcl__vec<V>::n == 2)
    return i == 0 ? v.x : v.y;
  else if constexpr (fcl__vec<V>::n == 3)
    return i == 0 ? v.x : i == 1 ? v.y : v.z;
  else if constexpr (fcl__vec<V>::n == 4)
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
  else
    return v.s[i];
}
template <typename V>
__device__ __forceinline__ typename fcl__vec<V>::elem fcl__lane(const V &v, int i) {
  return fcl__lane(const_cast<V &>(v), i);
}
#define FCL_LANE(v, i) fcl__lane(v, 0x##i)

template <typename V>
__device__ __forceinline__ V fcl__splat(typename fcl__vec<V>::elem x) {
  V v;
#pragma unroll
  for (int i = 0; i < fcl__vec<V>::n; ++i) fcl__lane(v, i) = x;
  return v;
}
template <typename V, typename... A>
__device__ __forceinline__ V fcl__make(A... a) {
  static_assert(sizeof...(A) == fcl__vec<V>::n, "a vector literal needs one value per lane");
  V v;
  int i = 0;
  ((fcl__lane(v, i++) = static_cast<typename fcl__vec<V>::elem>(a)), ...);
  return v;
}
#define FCL_VEC2(type, a, b) fcl__make<type>(a, b)
#define FCL_VEC3(type, a, b, c) fcl__make<type>(a, b, c)
#define FCL_VEC4(type, a, b, c, d) fcl__make<type>(a, b, c, d)
#define FCL_VEC8(type, a, b, c, d, e, f, g, h) fcl__make<type>(a, b, c, d, e, f, g, h)
#define FCL_VEC16(type, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)                            \
  fcl__make<type>(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)
#define FCL_SPLAT(type, x) fcl__splat<type>(x)

/* Lane-wise arithmetic: vector with vector, with a scalar on either side, compound assignment,
 * negation. */
#define FCL__BINARY(V, OP)                                                                         \
  __device__ __forceinline__ V operator OP(V a, const V &b) {                                      \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i) fcl__lane(a, i) = fcl__lane(a, i)   \
        OP fcl__lane(b, i);                                                                        \
    return a;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ V operator OP(V a, typename fcl__vec<V>::elem b) {                    \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i) fcl__lane(a, i) = fcl__lane(a, i)   \
        OP b;                                                                                      \
    return a;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ V operator OP(typename fcl__vec<V>::elem a, const V &b) {             \
    V r;                                                                                           \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i)                                     \
        fcl__lane(r, i) = a OP fcl__lane(b, i);                                                    \
    return r;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ V &operator OP##=(V &a, const V &b) { return a = a OP b; }            \
  __device__ __forceinline__ V &operator OP##=(V &a, typename fcl__vec<V>::elem b) {               \
    return a = a OP b;                                                                             \
  }
#define FCL__ARITH(V)                                                                              \
  FCL__BINARY(V, +)                                                                                \
  FCL__BINARY(V, -)                                                                                \
  FCL__BINARY(V, *)                                                                                \
  FCL__BINARY(V, /)                                                                                \
  __device__ __forceinline__ V operator-(V a) {                                                    \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i) fcl__lane(a, i) = -fcl__lane(a, i); \
    return a;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ V operator+(V a) { return a; }
#define FCL__ARITH_ALL(P)                                                                          \
  FCL__ARITH(P##2) FCL__ARITH(P##3) FCL__ARITH(P##4) FCL__ARITH(P##8) FCL__ARITH(P##16)
FCL__ARITH_ALL(float)
FCL__ARITH_ALL(double)
FCL__ARITH_ALL(int)
FCL__ARITH_ALL(uint)
#undef FCL__ARITH_ALL
#undef FCL__ARITH
#undef FCL__BINARY

/* vloadN / vstoreN: N values at p + N * offset, aligned only as one value is. */
#define FCL__VLOADS(E, P, N)                                                                       \
  __device__ __forceinline__ P##N vload##N(size_t offset, const E *p) {                            \
    P##N v;                                                                                        \
    _Pragma("unroll") for (int i = 0; i < N; ++i) fcl__lane(v, i) = p[offset * N + i];             \
    return v;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ void vstore##N(const P##N &v, size_t offset, E *p) {                  \
    _Pragma("unroll") for (int i = 0; i < N; ++i) p[offset * N + i] = fcl__lane(v, i);             \
  }
#define FCL__VLOAD_ALL(E)                                                                          \
  FCL__VLOADS(E, E, 2)                                                                             \
  FCL__VLOADS(E, E, 3) FCL__VLOADS(E, E, 4) FCL__VLOADS(E, E, 8) FCL__VLOADS(E, E, 16)
FCL__VLOAD_ALL(float)
FCL__VLOAD_ALL(double)
FCL__VLOAD_ALL(int)
FCL__VLOAD_ALL(uint)
#undef FCL__VLOAD_ALL
#undef FCL__VLOADS

/* ---- conversions: convert_T(x) (to integers towards zero, as OpenCL's default), convert_TN(v),
 * their rounding modes for integers; as_T(x) reinterprets the bits ---- */
#define FCL__CONVERT(T)                                                                            \
  template <typename X>                                                                            \
  __device__ __forceinline__ T convert_##T(X x) {                                                  \
    return static_cast<T>(x);                                                                      \
  }                                                                                                \
  template <typename X>                                                                            \
  __device__ __forceinline__ T as_##T(X x) {                                                       \
    static_assert(sizeof(X) == sizeof(T), "as_" #T ": sizes differ");                              \
    union {                                                                                        \
      X from;                                                                                      \
      T to;                                                                                        \
    } u;                                                                                           \
    u.from = x;                                                                                    \
    return u.to;                                                                                   \
  }
#define FCL__CONVERT_VEC(P, N)                                                                     \
  template <typename V>                                                                            \
  __device__ __forceinline__ P##N convert_##P##N(const V &v) {                                     \
    static_assert(fcl__vec<V>::n == N, "convert_" #P #N ": widths differ");                        \
    P##N r;                                                                                        \
    _Pragma("unroll") for (int i = 0; i < N; ++i)                                                  \
        fcl__lane(r, i) = static_cast<typename fcl__vec<P##N>::elem>(fcl__lane(v, i));             \
    return r;                                                                                      \
  }                                                                                                \
  template <typename X>                                                                            \
  __device__ __forceinline__ P##N as_##P##N(const X &x) {                                          \
    static_assert(sizeof(X) == sizeof(P##N), "as_" #P #N ": sizes differ");                        \
    union {                                                                                        \
      X from;                                                                                      \
      P##N to;                                                                                     \
    } u;                                                                                           \
    u.from = x;                                                                                    \
    return u.to;                                                                                   \
  }
#define FCL__CONVERT_ALL(P)                                                                        \
  FCL__CONVERT(P)                                                                                  \
  FCL__CONVERT_VEC(P, 2)                                                                           \
  FCL__CONVERT_VEC(P, 3) FCL__CONVERT_VEC(P, 4) FCL__CONVERT_VEC(P, 8) FCL__CONVERT_VEC(P, 16)
FCL__CONVERT_ALL(float)
FCL__CONVERT_ALL(double)
FCL__CONVERT_ALL(int)
FCL__CONVERT_ALL(uint)
FCL__CONVERT(long)
FCL__CONVERT(ulong)
FCL__CONVERT(short)
FCL__CONVERT(ushort)
FCL__CONVERT(char)
FCL__CONVERT(uchar)
#undef FCL__CONVERT_ALL
#undef FCL__CONVERT_VEC
#undef FCL__CONVERT
__device__ __forceinline__ int convert_int_rte(float x) { return __float2int_rn(x); }
__device__ __forceinline__ int convert_int_rtz(float x) { return __float2int_rz(x); }
__device__ __forceinline__ int convert_int_rtp(float x) { return __float2int_ru(x); }
__device__ __forceinline__ int convert_int_rtn(float x) { return __float2int_rd(x); }
__device__ __forceinline__ int convert_int_rte(double x) { return __double2int_rn(x); }
__device__ __forceinline__ int convert_int_rtz(double x) { return __double2int_rz(x); }
__device__ __forceinline__ int convert_int_rtp(double x) { return __double2int_ru(x); }
__device__ __forceinline__ int convert_int_rtn(double x) { return __double2int_rd(x); }

/* ---- built-in functions CUDA lacks, for float and double, and lane-wise on vectors ---- */
#define FCL__SCALAR(E)                                                                             \
  __device__ __forceinline__ E mad(E a, E b, E c) { return a * b + c; }                            \
  __device__ __forceinline__ E pown(E x, int n) { return pow(x, (E)n); }                           \
  __device__ __forceinline__ E powr(E x, E y) { return pow(x, y); }                                \
  __device__ __forceinline__ E rootn(E x, int n) { return pow(x, (E)1 / (E)n); }                   \
  __device__ __forceinline__ E fract(E x, E *i) {                                                  \
    *i = floor(x);                                                                                 \
    return fmin(x - *i, (E)0x1.fffffep-1f);                                                        \
  }                                                                                                \
  __device__ __forceinline__ E maxmag(E x, E y) {                                                  \
    return fabs(x) > fabs(y) ? x : fabs(y) > fabs(x) ? y : fmax(x, y);                             \
  }                                                                                                \
  __device__ __forceinline__ E minmag(E x, E y) {                                                  \
    return fabs(x) < fabs(y) ? x : fabs(y) < fabs(x) ? y : fmin(x, y);                             \
  }                                                                                                \
  __device__ __forceinline__ E tanpi(E x) { return tan((E)M_PI * x); }                             \
  __device__ __forceinline__ E acospi(E x) { return acos(x) / (E)M_PI; }                           \
  __device__ __forceinline__ E asinpi(E x) { return asin(x) / (E)M_PI; }                           \
  __device__ __forceinline__ E atanpi(E x) { return atan(x) / (E)M_PI; }                           \
  __device__ __forceinline__ E atan2pi(E y, E x) { return atan2(y, x) / (E)M_PI; }                 \
  __device__ __forceinline__ E clamp(E x, E lo, E hi) { return fmin(fmax(x, lo), hi); }            \
  __device__ __forceinline__ E degrees(E r) { return r * (E)(180 / M_PI); }                        \
  __device__ __forceinline__ E radians(E d) { return d * (E)(M_PI / 180); }                        \
  __device__ __forceinline__ E mix(E x, E y, E a) { return x + (y - x) * a; }                      \
  __device__ __forceinline__ E step(E edge, E x) { return x < edge ? (E)0 : (E)1; }                \
  __device__ __forceinline__ E smoothstep(E e0, E e1, E x) {                                       \
    E t = clamp((x - e0) / (e1 - e0), (E)0, (E)1);                                                 \
    return t * t * ((E)3 - (E)2 * t);                                                              \
  }                                                                                                \
  __device__ __forceinline__ E sign(E x) {                                                         \
    return x > 0 ? (E)1 : x < 0 ? (E)-1 : isnan(x) ? (E)0 : x;                                     \
  }                                                                                                \
  __device__ __forceinline__ E native_cos(E x) { return cos(x); }                                  \
  __device__ __forceinline__ E native_sin(E x) { return sin(x); }                                  \
  __device__ __forceinline__ E native_tan(E x) { return tan(x); }                                  \
  __device__ __forceinline__ E native_exp(E x) { return exp(x); }                                  \
  __device__ __forceinline__ E native_exp2(E x) { return exp2(x); }                                \
  __device__ __forceinline__ E native_exp10(E x) { return exp10(x); }                              \
  __device__ __forceinline__ E native_log(E x) { return log(x); }                                  \
  __device__ __forceinline__ E native_log2(E x) { return log2(x); }                                \
  __device__ __forceinline__ E native_log10(E x) { return log10(x); }                              \
  __device__ __forceinline__ E native_powr(E x, E y) { return pow(x, y); }                         \
  __device__ __forceinline__ E native_sqrt(E x) { return sqrt(x); }                                \
  __device__ __forceinline__ E native_rsqrt(E x) { return rsqrt(x); }                              \
  __device__ __forceinline__ E native_recip(E x) { return (E)1 / x; }                              \
  __device__ __forceinline__ E native_divide(E x, E y) { return x / y; }                           \
  __device__ __forceinline__ E half_cos(E x) { return cos(x); }                                    \
  __device__ __forceinline__ E half_sin(E x) { return sin(x); }                                    \
  __device__ __forceinline__ E half_tan(E x) { return tan(x); }                                    \
  __device__ __forceinline__ E half_exp(E x) { return exp(x); }                                    \
  __device__ __forceinline__ E half_exp2(E x) { return exp2(x); }                                  \
  __device__ __forceinline__ E half_exp10(E x) { return exp10(x); }                                \
  __device__ __forceinline__ E half_log(E x) { return log(x); }                                    \
  __device__ __forceinline__ E half_log2(E x) { return log2(x); }                                  \
  __device__ __forceinline__ E half_log10(E x) { return log10(x); }                                \
  __device__ __forceinline__ E half_powr(E x, E y) { return pow(x, y); }                           \
  __device__ __forceinline__ E half_sqrt(E x) { return sqrt(x); }                                  \
  __device__ __forceinline__ E half_rsqrt(E x) { return rsqrt(x); }                                \
  __device__ __forceinline__ E half_recip(E x) { return (E)1 / x; }                                \
  __device__ __forceinline__ E half_divide(E x, E y) { return x / y; }                             \
  __device__ __forceinline__ int isequal(E x, E y) { return x == y; }                              \
  __device__ __forceinline__ int isnotequal(E x, E y) { return x != y; }                           \
  __device__ __forceinline__ int isgreater(E x, E y) { return x > y; }                             \
  __device__ __forceinline__ int isgreaterequal(E x, E y) { return x >= y; }                       \
  __device__ __forceinline__ int isless(E x, E y) { return x < y; }                                \
  __device__ __forceinline__ int islessequal(E x, E y) { return x <= y; }                          \
  __device__ __forceinline__ int islessgreater(E x, E y) { return x < y || x > y; }                \
  __device__ __forceinline__ int isordered(E x, E y) { return x == x && y == y; }                  \
  __device__ __forceinline__ int isunordered(E x, E y) { return !(x == x && y == y); }             \
  __device__ __forceinline__ int isnormal(E x) {                                                   \
    return isfinite(x) && fabs(x) >= (sizeof(E) == 4 ? (E)FLT_MIN : (E)DBL_MIN);                   \
  }                                                                                                \
  __device__ __forceinline__ E select(E a, E b, int c) { return c ? b : a; }                       \
  __device__ __forceinline__ E dot(E a, E b) { return a * b; }                                     \
  __device__ __forceinline__ E length(E a) { return fabs(a); }                                     \
  __device__ __forceinline__ E distance(E a, E b) { return fabs(a - b); }                          \
  __device__ __forceinline__ E normalize(E a) { return a > 0 ? (E)1 : a < 0 ? (E)-1 : a; }         \
  __device__ __forceinline__ E fast_length(E a) { return fabs(a); }                                \
  __device__ __forceinline__ E fast_distance(E a, E b) { return fabs(a - b); }                     \
  __device__ __forceinline__ E fast_normalize(E a) { return normalize(a); }
FCL__SCALAR(float)
FCL__SCALAR(double)
#undef FCL__SCALAR

/* Integer helpers OpenCL has and CUDA names otherwise. */
__device__ __forceinline__ int clamp(int x, int lo, int hi) { return min(max(x, lo), hi); }
__device__ __forceinline__ long clamp(long x, long lo, long hi) {
  return x < lo ? lo : x > hi ? hi : x;
}
__device__ __forceinline__ int mad24(int a, int b, int c) { return a * b + c; }
__device__ __forceinline__ int mul24(int a, int b) { return a * b; }
__device__ __forceinline__ uint abs_diff(int a, int b) {
  return a > b ? (uint)(a - b) : (uint)(b - a);
}
__device__ __forceinline__ int popcount(int x) { return __popc(x); }
__device__ __forceinline__ int clz(int x) { return __clz(x); }
__device__ __forceinline__ int ctz(int x) { return x ? __ffs(x) - 1 : 32; }
__device__ __forceinline__ int mul_hi(int a, int b) { return __mulhi(a, b); }
__device__ __forceinline__ int rotate(int x, int n) {
  return (int)(((uint)x << (n & 31)) | ((uint)x >> ((32 - n) & 31)));
}

/* Lane-wise math on vectors: every function of one or two real arguments. */
#define FCL__LANES1(F, V)                                                                          \
  __device__ __forceinline__ V F(V a) {                                                            \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i)                                     \
        fcl__lane(a, i) = F(fcl__lane(a, i));                                                      \
    return a;                                                                                      \
  }
#define FCL__LANES2(F, V)                                                                          \
  __device__ __forceinline__ V F(V a, const V &b) {                                                \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i)                                     \
        fcl__lane(a, i) = F(fcl__lane(a, i), fcl__lane(b, i));                                     \
    return a;                                                                                      \
  }
#define FCL__LANES3(F, V)                                                                          \
  __device__ __forceinline__ V F(V a, const V &b, const V &c) {                                    \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i)                                     \
        fcl__lane(a, i) = F(fcl__lane(a, i), fcl__lane(b, i), fcl__lane(c, i));                    \
    return a;                                                                                      \
  }
/* clang-format off */
#define FCL__ALLV(M, F)                                                                            \
  M(F, float2) M(F, float3) M(F, float4) M(F, float8) M(F, float16) M(F, double2) M(F, double3)    \
  M(F, double4) M(F, double8) M(F, double16)
#define FCL__V1(F) FCL__ALLV(FCL__LANES1, F)
#define FCL__V2(F) FCL__ALLV(FCL__LANES2, F)
#define FCL__V3(F) FCL__ALLV(FCL__LANES3, F)
FCL__V1(acos) FCL__V1(acosh) FCL__V1(acospi) FCL__V1(asin) FCL__V1(asinh) FCL__V1(asinpi)
FCL__V1(atan) FCL__V1(atanh) FCL__V1(atanpi) FCL__V1(cbrt) FCL__V1(ceil) FCL__V1(cos) FCL__V1(cosh)
FCL__V1(cospi) FCL__V1(erfc) FCL__V1(erf) FCL__V1(exp) FCL__V1(exp2) FCL__V1(exp10) FCL__V1(expm1)
FCL__V1(fabs) FCL__V1(floor) FCL__V1(lgamma) FCL__V1(log) FCL__V1(log2) FCL__V1(log10)
FCL__V1(log1p) FCL__V1(logb) FCL__V1(rint) FCL__V1(round) FCL__V1(rsqrt) FCL__V1(sin) FCL__V1(sinh)
FCL__V1(sinpi) FCL__V1(sqrt) FCL__V1(tan) FCL__V1(tanh) FCL__V1(tanpi) FCL__V1(tgamma)
FCL__V1(trunc) FCL__V1(degrees) FCL__V1(radians) FCL__V1(sign) FCL__V1(native_cos)
FCL__V1(native_sin) FCL__V1(native_tan) FCL__V1(native_exp) FCL__V1(native_exp2)
FCL__V1(native_exp10) FCL__V1(native_log) FCL__V1(native_log2) FCL__V1(native_log10)
FCL__V1(native_sqrt) FCL__V1(native_rsqrt) FCL__V1(native_recip) FCL__V1(half_cos)
FCL__V1(half_sin) FCL__V1(half_tan) FCL__V1(half_exp) FCL__V1(half_exp2) FCL__V1(half_exp10)
FCL__V1(half_log) FCL__V1(half_log2) FCL__V1(half_log10) FCL__V1(half_sqrt) FCL__V1(half_rsqrt)
FCL__V1(half_recip) FCL__V2(atan2) FCL__V2(atan2pi) FCL__V2(copysign) FCL__V2(fdim) FCL__V2(fmax)
FCL__V2(fmin) FCL__V2(fmod) FCL__V2(hypot) FCL__V2(maxmag) FCL__V2(minmag) FCL__V2(nextafter)
FCL__V2(pow) FCL__V2(powr) FCL__V2(remainder) FCL__V2(step) FCL__V2(native_powr)
FCL__V2(native_divide) FCL__V2(half_powr) FCL__V2(half_divide) FCL__V2(max) FCL__V2(min)
FCL__V3(fma) FCL__V3(mad) FCL__V3(clamp) FCL__V3(mix) FCL__V3(smoothstep)
/* clang-format on */
#undef FCL__V1
#undef FCL__V2
#undef FCL__V3
#undef FCL__ALLV
#undef FCL__LANES1
#undef FCL__LANES2
#undef FCL__LANES3

/* Geometric functions on vectors. */
#define FCL__GEOMETRIC(V)                                                                          \
  __device__ __forceinline__ fcl__vec<V>::elem dot(const V &a, const V &b) {                       \
    fcl__vec<V>::elem s = 0;                                                                       \
    _Pragma("unroll") for (int i = 0; i < fcl__vec<V>::n; ++i)                                     \
        s += fcl__lane(a, i) * fcl__lane(b, i);                                                    \
    return s;                                                                                      \
  }                                                                                                \
  __device__ __forceinline__ fcl__vec<V>::elem length(const V &a) { return sqrt(dot(a, a)); }      \
  __device__ __forceinline__ fcl__vec<V>::elem distance(const V &a, const V &b) {                  \
    return length(a - b);                                                                          \
  }                                                                                                \
  __device__ __forceinline__ V normalize(const V &a) { return a / length(a); }                     \
  __device__ __forceinline__ fcl__vec<V>::elem fast_length(const V &a) { return length(a); }       \
  __device__ __forceinline__ fcl__vec<V>::elem fast_distance(const V &a, const V &b) {             \
    return distance(a, b);                                                                         \
  }                                                                                                \
  __device__ __forceinline__ V fast_normalize(const V &a) { return normalize(a); }
                                                FCL__GEOMETRIC(float2) FCL__GEOMETRIC(float3)
                                                    FCL__GEOMETRIC(float4) FCL__GEOMETRIC(double2)
                                                        FCL__GEOMETRIC(double3)
                                                            FCL__GEOMETRIC(double4)
#undef FCL__GEOMETRIC
                                                                __device__ __forceinline__ float3
    cross(const float3 &a, const float3 &b) {
  return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ double3 cross(const double3 &a, const double3 &b) {
  return make_double3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

#endif
/* The program's own text starts at its line 1 (build logs name its lines). */
#line 1
