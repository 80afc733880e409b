"""Native runtime support emitted as LLVM IR: the thread pool of parallel loops."""
