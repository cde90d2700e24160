/* Capture of one kernel launch as a self-contained C program that uses only OpenCL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "flowcl/opencl.h"
#include "flowcl/version.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

static void write_c_string(FILE *f, const char *s) {
  fputs("  \"", f);
  for (; *s; ++s) {
    switch (*s) {
      case '\\': fputs("\\\\", f); break;
      case '"': fputs("\\\"", f); break;
      case '\t': fputs("\\t", f); break;
      case '\r': break;
      case '\n': fputs(s[1] ? "\\n\"\n  \"" : "\\n", f); break;
      case '?': fputs("\\?", f); break; /* no trigraphs */
      default: fputc(*s, f);
    }
  }
  fputs("\"", f);
}

static void write_bytes(FILE *f, const char *name, const unsigned char *data, size_t n) {
  fprintf(f, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
  if (n == 0) fputs("0", f);
  for (size_t i = 0; i < n; ++i)
    fprintf(f, "%s0x%02x", i == 0 ? "\n  " : i % 16 ? "," : ",\n  ", data[i]);
  fputs("};\n", f);
}

static void write_sizes(FILE *f, const char *name, cl_uint dim, const size_t *v) {
  fprintf(f, "  const size_t %s[3] = {", name);
  for (cl_uint i = 0; i < 3; ++i) fprintf(f, "%s%zu", i ? ", " : "", i < dim ? v[i] : 1);
  fputs("};\n", f);
}

/* First argument index holding the same buffer, so aliased arguments stay aliased. */
static cl_uint first_alias(const fcl_kernel *k, cl_uint i) {
  for (cl_uint j = 0; j < i; ++j)
    if (k->values[j].how == FCL__BUFFER && k->values[j].native == k->values[i].native) return j;
  return i;
}

static const char main_head[] =
    "#define CHECK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) { \\\n"
    "  fprintf(stderr, \"%s failed: %d (line %d)\\n\", #call, e_, __LINE__); return 1; } } while "
    "(0)\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  unsigned pi = 0, di = 0;\n"
    "  if (argc > 1 && sscanf(argv[1], \"%u:%u\", &pi, &di) < 1) {\n"
    "    fprintf(stderr, \"usage: %s [platform:device] [output file]\\n\", argv[0]);\n"
    "    return 2;\n"
    "  }\n"
    "  const char *out_path = argc > 2 ? argv[2] : \"capture.out\";\n"
    "  cl_platform_id platforms[16];\n"
    "  cl_uint np = 0, nd = 0;\n"
    "  CHECK(clGetPlatformIDs(16, platforms, &np));\n"
    "  if (pi >= np) { fprintf(stderr, \"no platform %u\\n\", pi); return 1; }\n"
    "  cl_device_id devices[16];\n"
    "  CHECK(clGetDeviceIDs(platforms[pi], CL_DEVICE_TYPE_ALL, 16, devices, &nd));\n"
    "  if (di >= nd) { fprintf(stderr, \"no device %u:%u\\n\", pi, di); return 1; }\n"
    "  cl_device_id device = devices[di];\n"
    "  cl_int err;\n"
    "  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);\n"
    "  CHECK(err);\n"
    "  cl_command_queue queue = clCreateCommandQueue(ctx, device, 0, &err);\n"
    "  CHECK(err);\n"
    "  const char *src = source;\n"
    "  cl_program program = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);\n"
    "  CHECK(err);\n"
    "  if (clBuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS) {\n"
    "    static char log[65536];\n"
    "    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);\n"
    "    fprintf(stderr, \"build failed:\\n%s\\n\", log);\n"
    "    return 1;\n"
    "  }\n"
    "  cl_kernel kernel = clCreateKernel(program, kernel_name, &err);\n"
    "  CHECK(err);\n";

static fcl_status write_program(fcl_kernel *k, fcl_queue *queue, FILE *f, cl_uint dim,
                                const size_t *global, const size_t *local, const size_t *offset) {
  const fcl__kernel_meta *m = k->meta;
  fprintf(f,
          "/* Reproducer of one launch of kernel '%s' from %s, written by flowcl %s.\n"
          " * Build: cc this_file.c -lOpenCL   Run: ./a.out [platform:device] [output file]\n"
          " * After the launch, every buffer argument is written to the output file in\n"
          " * argument order. Needs only an OpenCL implementation. */\n",
          m->name, k->program->origin, FLOWCL_VERSION_STRING);
  fputs("#define CL_TARGET_OPENCL_VERSION 120\n#define CL_USE_DEPRECATED_OPENCL_1_2_APIS\n"
        "#include <CL/cl.h>\n#include <stdio.h>\n\n",
        f);
  fputs("static const char source[] =\n", f);
  write_c_string(f, k->program->source);
  fputs(";\nstatic const char options[] =\n", f);
  write_c_string(f, k->program->options);
  fprintf(f, ";\nstatic const char kernel_name[] = \"%s\";\n\n", m->name);
  for (cl_uint i = 0; i < m->num_args; ++i) {
    fcl__arg_value *v = &k->values[i];
    char name[32];
    snprintf(name, sizeof name, "arg%u", i);
    fprintf(f, "/* argument %u: %s %s */\n", i, m->args[i].type_name, m->args[i].name);
    if (v->how == FCL__VALUE) {
      write_bytes(f, name, v->size > sizeof v->value ? v->big : v->value, v->size);
    } else if (v->how == FCL__BUFFER && v->native && first_alias(k, i) == i) {
      size_t size = 0;
      FCL_CL_TRY(clGetMemObjectInfo(v->native, CL_MEM_SIZE, sizeof size, &size, NULL),
                 "clGetMemObjectInfo(CL_MEM_SIZE) of argument %u", i);
      unsigned char *data = malloc(size ? size : 1);
      if (!data) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "capture of a %zu-byte buffer", size);
      cl_int err = clEnqueueReadBuffer(fcl_queue_cl(queue), v->native, CL_TRUE, 0, size, data, 0,
                                       NULL, NULL);
      if (err != CL_SUCCESS) {
        free(data);
        return FCL_CL_ERROR(err, "reading argument %u (%zu bytes) for the capture", i, size);
      }
      write_bytes(f, name, data, size);
      free(data);
    }
  }
  fputs("\n", f);
  fputs(main_head, f);
  for (cl_uint i = 0; i < m->num_args; ++i) {
    fcl__arg_value *v = &k->values[i];
    switch (v->how) {
      case FCL__VALUE:
        fprintf(f, "  CHECK(clSetKernelArg(kernel, %u, sizeof arg%u, arg%u));\n", i, i, i);
        break;
      case FCL__LOCAL:
        fprintf(f, "  CHECK(clSetKernelArg(kernel, %u, %zu, NULL));\n", i, v->size);
        break;
      case FCL__BUFFER:
        if (!v->native) {
          fprintf(f, "  CHECK(clSetKernelArg(kernel, %u, sizeof(cl_mem), NULL));\n", i);
        } else if (first_alias(k, i) == i) {
          fprintf(f,
                  "  cl_mem buf%u = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, "
                  "sizeof arg%u, (void *)arg%u, &err);\n  CHECK(err);\n",
                  i, i, i);
          fprintf(f, "  CHECK(clSetKernelArg(kernel, %u, sizeof(cl_mem), &buf%u));\n", i, i);
        } else {
          fprintf(f, "  CHECK(clSetKernelArg(kernel, %u, sizeof(cl_mem), &buf%u));\n", i,
                  first_alias(k, i));
        }
        break;
      case FCL__UNSET:
        return FCL_ERROR(FCL_ERR_INVALID_STATE,
                         "cannot capture kernel '%s': argument %u (%s) is "
                         "not set",
                         m->name, i, m->args[i].name);
      case FCL__IMAGE:
      case FCL__SAMPLER:
      case FCL__QUEUE:
        return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                         "cannot capture kernel '%s': argument %u (%s) is "
                         "an image, a sampler or a queue (captures hold buffers and values)",
                         m->name, i, m->args[i].name);
    }
  }
  write_sizes(f, "global", dim, global);
  if (local) write_sizes(f, "local", dim, local);
  if (offset) write_sizes(f, "offset", dim, offset);
  fprintf(f, "  CHECK(clEnqueueNDRangeKernel(queue, kernel, %u, %s, global, %s, 0, NULL, NULL));\n",
          dim, offset ? "offset" : "NULL", local ? "local" : "NULL");
  fputs("  CHECK(clFinish(queue));\n  FILE *out = fopen(out_path, \"wb\");\n"
        "  if (!out) { perror(out_path); return 1; }\n",
        f);
  for (cl_uint i = 0; i < m->num_args; ++i) {
    if (k->values[i].how != FCL__BUFFER || !k->values[i].native) continue;
    cl_uint a = first_alias(k, i);
    fprintf(f,
            "  { static unsigned char host[sizeof arg%u];\n"
            "    CHECK(clEnqueueReadBuffer(queue, buf%u, CL_TRUE, 0, sizeof host, host, 0, NULL, "
            "NULL));\n"
            "    fwrite(host, 1, sizeof host, out); }\n",
            a, a);
  }
  fputs("  fclose(out);\n  printf(\"ran one launch of %s; buffers written to %s\\n\", kernel_name, "
        "out_path);\n"
        "  return 0;\n}\n",
        f);
  return FCL_OK;
}

fcl_status fcl_kernel_capture(fcl_kernel *kernel, fcl_queue *queue, cl_uint work_dim,
                              const size_t *global, const size_t *local, const size_t *offset,
                              unsigned flags, const char *path) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_ARG(kernel->backend == &fcl__opencl_backend, 1, "kernel",
                "not an OpenCL kernel (a capture is an OpenCL program)");
  FCL_CHECK_ARG(queue->backend == &fcl__opencl_backend, 2, "queue", "not an OpenCL queue");
  FCL_CHECK_ARG(work_dim >= 1 && work_dim <= 3, 3, "work_dim", "must be 1, 2 or 3");
  FCL_CHECK_NULL(global, 4);
  FCL_CHECK_NULL(path, 8);
  if (!kernel->program->source)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "cannot capture kernel '%s': its program %s has no "
                     "source",
                     kernel->meta->name, kernel->program->origin);
  size_t scaled[3];
  if (flags & FCL_LAUNCH_G_TIMES_L) {
    FCL_CHECK_ARG(local != NULL, 5, "local", "FCL_LAUNCH_G_TIMES_L needs local sizes");
    for (cl_uint i = 0; i < work_dim; ++i) scaled[i] = global[i] * local[i];
    global = scaled;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return FCL_ERROR(FCL_ERR_IO, "cannot create %s for the capture of '%s'", tmp,
                     kernel->meta->name);
  fcl_status st = write_program(kernel, queue, f, work_dim, global, local, offset);
  if (fclose(f) != 0 && st == FCL_OK) st = FCL_ERROR(FCL_ERR_IO, "cannot write %s", tmp);
  if (st == FCL_OK && rename(tmp, path) != 0)
    st = FCL_ERROR(FCL_ERR_IO, "cannot rename %s to %s", tmp, path);
  if (st != FCL_OK) remove(tmp);
  return st;
}
