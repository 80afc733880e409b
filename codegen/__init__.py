"""Code generation: TIR to native code through LLVM, and a reference interpreter."""
