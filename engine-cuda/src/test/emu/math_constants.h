// host stand-in for CUDA's math_constants.h (only what the kernels use)
#pragma once
#define CUDART_INF_F INFINITY
