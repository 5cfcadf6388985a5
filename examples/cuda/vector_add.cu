// vector_add.cu — the first CUDA program: c = a + b over a grid-stride loop.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

__global__ void add(const float *a, const float *b, float *c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  size_t bytes = n * sizeof(float);
  float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
  for (int i = 0; i < n; i++) {
    ha[i] = (float)i;
    hb[i] = 2.0f * (float)i;
  }
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
  add<<<64, 256>>>(a, b, c, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += hc[i] != 3.0f * (float)i;
  printf("vector_add: %d elements, %d wrong, c[12345] = %.1f\n", n, wrong, hc[12345]);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  free(ha), free(hb), free(hc);
  return wrong != 0;
}
