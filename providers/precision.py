"""The precisions MiniLM runs at (`providers.minilm_embedder`)."""

#: "fp32"; "bf16": matrix products in bfloat16, 1.6x faster on CPUs with native bfloat16
#: (AVX512-BF16, AMX) at a cosine of 0.99998 with fp32, slower elsewhere; "auto": bf16 when the
#: CPU has it natively, else fp32.
PRECISIONS = ("auto", "fp32", "bf16")
