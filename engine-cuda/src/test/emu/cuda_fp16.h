// host stand-in for CUDA's cuda_fp16.h: see cuda_bf16.h
#pragma once
#include "cuda_bf16.h"
