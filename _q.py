import time
from kgqa_core.models import load_model
t=time.time(); L=load_model("qwen2.5-coder-1.5b", backend="llama.cpp", progress=print); print("load", time.time()-t, L.context_length, L.n_ctx, L.eos_ids)
