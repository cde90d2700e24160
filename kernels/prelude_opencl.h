/* flowcl's kernel vocabulary in OpenCL C (docs/extending.md, "What a kernel may use"). The
 * runtime puts this text before every program it builds from source (fcl_program_create_source):
 * the kernels of this folder, the generated ones and the users'. Each name expands to the OpenCL
 * text that kernels wrote before there was a vocabulary, so the compiled code is the same; a
 * prelude for another compiler (CUDA C++ through NVRTC) defines the same names. Outside this file
 * no kernel text uses a vector literal, an .sN lane, an address-space qualifier, an attribute or
 * barrier() (tests/style/portable_kernels_check.sh). */
#ifndef FCL_PRELUDE_OPENCL
#define FCL_PRELUDE_OPENCL

/* A kernel (an entry point), and the work-group size it must be launched with. */
#define FCL_KERNEL __kernel
#define FCL_GROUP_SIZE(x, y, z) __attribute__((reqd_work_group_size(x, y, z)))

/* Address spaces: what a pointer to global or constant memory points to. */
#define FCL_GLOBAL __global
#define FCL_CONSTANT __constant

/* Local (work-group) memory in its three roles: a variable declared in a kernel's body
 * (`FCL_LOCAL float tile[16][17];`), what a pointer into local memory points to
 * (`FCL_LOCAL_PTR const float *row = tile[j];`), and a kernel parameter whose size the host
 * sets (`FCL_LOCAL_PARAM(int, scratch)`). */
#define FCL_LOCAL __local
#define FCL_LOCAL_PTR __local
#define FCL_LOCAL_PARAM(type, name) __local type *name

/* Every work-item of the group has reached it, and its local-memory writes are visible. */
#define FCL_BARRIER_LOCAL() barrier(CLK_LOCAL_MEM_FENCE)

/* Vectors: one value per lane (FCL_VECn for an n-lane type: OpenCL C before 2.0 has no variadic
 * macros), one value for every lane, and lane i (a hex digit, 0 to f) of a vector. */
#define FCL_VEC2(type, a, b) ((type)(a, b))
#define FCL_VEC3(type, a, b, c) ((type)(a, b, c))
#define FCL_VEC4(type, a, b, c, d) ((type)(a, b, c, d))
#define FCL_VEC8(type, a, b, c, d, e, f, g, h) ((type)(a, b, c, d, e, f, g, h))
#define FCL_VEC16(type, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)                            \
  ((type)(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p))
#define FCL_SPLAT(type, x) ((type)(x))
#define FCL_LANE(v, i) ((v).s##i)

#endif
/* The program's own text starts at its line 1 (build logs name its lines). */
#line 1
