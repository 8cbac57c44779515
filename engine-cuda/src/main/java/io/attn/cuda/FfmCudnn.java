package io.attn.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.attn.AttnException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * cuDNN's backend API ({@code cudnn_graph.h}) bound with {@code java.lang.foreign} from {@code libcudnn.so.9}, as other
 * non-C++ bindings do: descriptors are created, given attributes, finalized and executed by the plain C entry points
 * {@code cudnnBackendCreateDescriptor}, {@code cudnnBackendSetAttribute}, {@code cudnnBackendGetAttribute}, {@code
 * cudnnBackendFinalize}, {@code cudnnBackendExecute}, {@code cudnnBackendDestroyDescriptor}, plus {@code
 * cudnnGetVersion}, {@code cudnnCreate}, {@code cudnnSetStream}, {@code cudnnDestroy} and the error strings. The enum
 * values below are those of cuDNN 9's headers (stable across 9.x); {@code FfmCudnnTest} finalizes descriptors with them
 * against a real library, so a wrong value fails there.
 *
 * <p>{@link #locate} finds the library: the backend option {@value #OPTION} (a file or directory), the environment
 * variable {@value #ENV}, then {@code nvidia/cudnn/lib} under the {@code site-packages} of the Python environment
 * first on {@code PATH} (where PyTorch's {@code nvidia-cudnn-cu13} / {@code -cu12} wheels put it), then the dynamic
 * linker's search. {@code libcudnn.so.9} loads its engine libraries ({@code libcudnn_graph.so.9}, ...) from its own
 * directory ({@code RPATH $ORIGIN}). Not thread-safe by itself: the backend's stream lock serialises calls.
 */
@SuppressWarnings("restricted")
final class FfmCudnn {
    static final String SONAME = "libcudnn.so.9", OPTION = "cudnn.path", ENV = "ATTN_CUDNN";
    /** The oldest cuDNN taken: 9.0 ({@code cudnnGetVersion} is major * 10000 + minor * 100 + patch from 9 on). */
    static final long MIN_VERSION = 90000;

    // cudnnBackendDescriptorType_t
    static final int POINTWISE_DESCRIPTOR = 0,
            ENGINECFG_DESCRIPTOR = 3,
            ENGINEHEUR_DESCRIPTOR = 4,
            EXECUTION_PLAN_DESCRIPTOR = 5,
            OPERATION_POINTWISE_DESCRIPTOR = 13,
            OPERATIONGRAPH_DESCRIPTOR = 15,
            VARIANT_PACK_DESCRIPTOR = 16,
            TENSOR_DESCRIPTOR = 17,
            MATMUL_DESCRIPTOR = 18,
            OPERATION_MATMUL_DESCRIPTOR = 19,
            REDUCTION_DESCRIPTOR = 21,
            OPERATION_REDUCTION_DESCRIPTOR = 22;
    // cudnnBackendAttributeType_t
    static final int TYPE_HANDLE = 0,
            TYPE_DATA_TYPE = 1,
            TYPE_BOOLEAN = 2,
            TYPE_INT64 = 3,
            TYPE_FLOAT = 4,
            TYPE_DOUBLE = 5,
            TYPE_VOID_PTR = 6,
            TYPE_HEUR_MODE = 8,
            TYPE_POINTWISE_MODE = 14,
            TYPE_BACKEND_DESCRIPTOR = 15,
            TYPE_REDUCTION_OPERATOR_TYPE = 18;
    // cudnnBackendAttributeName_t
    static final int ATTR_POINTWISE_MODE = 0,
            ATTR_POINTWISE_MATH_PREC = 1,
            ATTR_POINTWISE_AXIS = 9,
            ATTR_ENGINEHEUR_MODE = 200,
            ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
            ATTR_ENGINEHEUR_RESULTS = 202,
            ATTR_EXECUTION_PLAN_HANDLE = 400,
            ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
            ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
            ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
            ATTR_OPERATION_POINTWISE_XDESC = 751,
            ATTR_OPERATION_POINTWISE_BDESC = 752,
            ATTR_OPERATION_POINTWISE_YDESC = 753,
            ATTR_OPERATION_POINTWISE_TDESC = 758,
            ATTR_OPERATIONGRAPH_HANDLE = 800,
            ATTR_OPERATIONGRAPH_OPS = 801,
            ATTR_TENSOR_BYTE_ALIGNMENT = 900,
            ATTR_TENSOR_DATA_TYPE = 901,
            ATTR_TENSOR_DIMENSIONS = 902,
            ATTR_TENSOR_STRIDES = 903,
            ATTR_TENSOR_UNIQUE_ID = 906,
            ATTR_TENSOR_IS_VIRTUAL = 907,
            ATTR_TENSOR_IS_BY_VALUE = 908,
            ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
            ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
            ATTR_VARIANT_PACK_WORKSPACE = 1003,
            ATTR_MATMUL_COMP_TYPE = 1500,
            ATTR_OPERATION_MATMUL_ADESC = 1520,
            ATTR_OPERATION_MATMUL_BDESC = 1521,
            ATTR_OPERATION_MATMUL_CDESC = 1522,
            ATTR_OPERATION_MATMUL_DESC = 1523,
            ATTR_REDUCTION_OPERATOR = 1600,
            ATTR_REDUCTION_COMP_TYPE = 1601,
            ATTR_OPERATION_REDUCTION_XDESC = 1610,
            ATTR_OPERATION_REDUCTION_YDESC = 1611,
            ATTR_OPERATION_REDUCTION_DESC = 1612;
    // cudnnDataType_t
    static final int DATA_FLOAT = 0, DATA_HALF = 2, DATA_INT32 = 4, DATA_BFLOAT16 = 9, DATA_BOOLEAN = 11;
    // cudnnPointwiseMode_t
    static final int PW_ADD = 0,
            PW_MUL = 1,
            PW_DIV = 6,
            PW_SUB = 9,
            PW_EXP = 13,
            PW_CMP_GE = 303,
            PW_GEN_INDEX = 501,
            PW_BINARY_SELECT = 601;
    // cudnnReduceTensorOp_t, cudnnBackendHeurMode_t
    static final int REDUCE_ADD = 0, REDUCE_MAX = 3;
    static final int HEUR_MODE_FALLBACK = 2, HEUR_MODE_A = 3;
    private final MethodHandle getVersion, cudartVersion, create, destroy, setStream, errorString, lastError;
    private final MethodHandle createDesc, destroyDesc, setAttr, getAttr, finalizeDesc, execute;
    final String where;
    final long version;
    /** The CUDA major version this cuDNN was built for (13 for the {@code -cu13} wheel): its libraries' sonames. */
    final int cudaMajor;

    /** The library file, when it was loaded by path (null: by soname). */
    final Path file;

    private FfmCudnn(SymbolLookup sym, String where, Path file) {
        this.file = file;
        Linker linker = Linker.nativeLinker();
        getVersion = bind(linker, sym, FunctionDescriptor.of(JAVA_LONG), "cudnnGetVersion");
        cudartVersion = bind(linker, sym, FunctionDescriptor.of(JAVA_LONG), "cudnnGetCudartVersion");
        create = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cudnnCreate");
        destroy = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cudnnDestroy");
        setStream = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), "cudnnSetStream");
        errorString = bind(linker, sym, FunctionDescriptor.of(ADDRESS, JAVA_INT), "cudnnGetErrorString");
        MethodHandle last;
        try {
            last = bind(linker, sym, FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG), "cudnnGetLastErrorString");
        } catch (AttnException e) {
            last = null; // before 9.0
        }
        lastError = last;
        createDesc =
                bind(linker, sym, FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), "cudnnBackendCreateDescriptor");
        destroyDesc = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cudnnBackendDestroyDescriptor");
        setAttr = bind(
                linker,
                sym,
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
                "cudnnBackendSetAttribute");
        getAttr = bind(
                linker,
                sym,
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS),
                "cudnnBackendGetAttribute");
        finalizeDesc = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS), "cudnnBackendFinalize");
        execute = bind(linker, sym, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), "cudnnBackendExecute");
        this.where = where;
        try {
            this.version = (long) getVersion.invokeExact();
            this.cudaMajor = (int) ((long) cudartVersion.invokeExact() / 1000);
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnGetVersion failed: " + t, t);
        }
    }

    /** Binds the library {@code lib} (a loaded {@code libcudnn.so.9}); AttnException when an entry point is missing. */
    static FfmCudnn bind(SymbolLookup lib, String where, Path file) {
        return new FfmCudnn(lib, where, file);
    }

    /** "9.24.0" from {@code cudnnGetVersion}'s major * 10000 + minor * 100 + patch. */
    static String versionString(long v) {
        return v / 10000 + "." + (v / 100) % 100 + "." + v % 100;
    }

    /**
     * Null when cuDNN {@code version} can run our SDPA graph, else why not: older than 9.0, or 9.10.0 / 9.10.1 (whose
     * fp16 / bf16 SDPA forward has known bugs: cudnn-frontend refuses them too).
     */
    static String versionUnsupported(long version) {
        if (version < MIN_VERSION)
            return "cuDNN " + versionString(version) + " is older than 9.0 (the backend graph API this path uses)";
        if (version == 91000 || version == 91001)
            return "cuDNN " + versionString(version)
                    + " has known bugs in its fp16/bf16 SDPA forward (9.10.2+ is fine)";
        return null;
    }

    /**
     * Null when the libraries cuDNN's engines open by soname at plan time ({@code libcublasLt.so.N}, {@code
     * libnvrtc.so.N}, N = {@link #cudaMajor}) are loadable, else why not. A missing {@code libcublasLt} makes cuDNN
     * abort the process ("Cannot load symbol cublasLtGetVersion"), so this is checked first. The NVIDIA wheels beside
     * this cuDNN ({@code nvidia/cu13/lib}, {@code nvidia/cublas/lib}, {@code nvidia/cuda_nvrtc/lib} of the same {@code
     * site-packages}) are loaded first by path, so that cuDNN's dlopen by soname finds them.
     */
    String enginesMissing(Path libFile) {
        List<String> why = new ArrayList<>();
        for (String base : List.of("libcublasLt", "libnvrtc")) {
            String so = base + ".so." + cudaMajor;
            if (libFile != null
                    && libFile.getParent() != null
                    && libFile.getParent().getParent() != null) {
                Path nvidia = libFile.getParent().getParent().getParent(); // .../nvidia/cudnn/lib -> .../nvidia
                for (String sub : List.of("cu" + cudaMajor + "/lib", "cublas/lib", "cuda_nvrtc/lib")) {
                    Path f = nvidia == null ? null : nvidia.resolve(sub).resolve(so);
                    if (f == null || !Files.isRegularFile(f)) continue;
                    try {
                        SymbolLookup.libraryLookup(f, Arena.global());
                        break;
                    } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
                        why.add(f + " does not load: " + e.getMessage());
                    }
                }
            }
            try {
                SymbolLookup.libraryLookup(so, Arena.global()); // loaded above, or on the linker path
            } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
                why.add(so + " (which cuDNN's engines load) is not loadable");
            }
        }
        return why.isEmpty() ? null : String.join("; ", why);
    }

    /** The outcome of {@link #locate}: the bound library, or null with every place tried. */
    record Located(FfmCudnn lib, List<String> looked) {
        String notFound() {
            return "no " + SONAME + " found (tried " + String.join("; ", looked) + "); point to one with " + ENV
                    + "=DIR or --backend-opt " + OPTION + "=DIR";
        }
    }

    static Located locate(Map<String, String> extra) {
        return locate(extra, System::getenv);
    }

    /** The search of the class comment; {@code env} reads environment variables (tests pass a map). */
    static Located locate(Map<String, String> extra, Function<String, String> env) {
        List<String> looked = new ArrayList<>();
        for (String[] explicit :
                new String[][] {{extra.get(OPTION), "option " + OPTION}, {env.apply(ENV), "env " + ENV}}) {
            if (explicit[0] == null || explicit[0].isBlank()) continue;
            for (String s : explicit[0].split(":")) {
                if (s.isBlank()) continue;
                Path p = Path.of(s.trim());
                FfmCudnn f = tryFile(Files.isDirectory(p) ? p.resolve(SONAME) : p, explicit[1], looked);
                if (f != null) return new Located(f, looked);
            }
        }
        CublasLocator.PythonEnv py = CublasLocator.pythonEnv(env.apply("PATH"), CublasLocator::askPython);
        if (py != null) {
            for (Path sp : py.sitePackages()) {
                FfmCudnn f = tryFile(sp.resolve("nvidia/cudnn/lib").resolve(SONAME), py.label(), looked);
                if (f != null) return new Located(f, looked);
            }
        } else looked.add("no python3 on PATH");
        try {
            SymbolLookup l = SymbolLookup.libraryLookup(SONAME, Arena.global());
            return new Located(bind(l, SONAME + " (the dynamic linker's search)", null), looked);
        } catch (IllegalArgumentException | AttnException e) {
            looked.add("linker path (LD_LIBRARY_PATH, ldconfig): " + e.getMessage());
        }
        return new Located(null, looked);
    }

    private static FfmCudnn tryFile(Path f, String source, List<String> looked) {
        if (!Files.exists(f)) {
            looked.add(source + ": " + f + " (does not exist)");
            return null;
        }
        try {
            return bind(SymbolLookup.libraryLookup(f, Arena.global()), f + " (" + source + ")", f);
        } catch (IllegalArgumentException | UnsatisfiedLinkError | AttnException e) {
            looked.add(source + ": " + f + " (failed to load: " + e.getMessage() + ")");
            return null;
        }
    }

    private static MethodHandle bind(Linker linker, SymbolLookup sym, FunctionDescriptor fd, String name) {
        Optional<MemorySegment> s = sym.find(name);
        if (s.isEmpty()) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, "cuDNN library lacks " + name);
        return linker.downcallHandle(s.get(), fd);
    }

    // ---- calls ----

    /** Throws a one-line AttnException naming {@code call}, the status and cuDNN's last error message. */
    void check(int status, String call) {
        if (status == 0) return;
        String name = "cudnnStatus " + status;
        try {
            MemorySegment s = (MemorySegment) errorString.invokeExact(status);
            if (!s.equals(MemorySegment.NULL)) name = s.reinterpret(256).getString(0);
        } catch (Throwable ignored) {
            // the number is enough
        }
        String detail = "";
        if (lastError != null) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(512);
                lastError.invokeExact(buf, 512L);
                String m = buf.getString(0).strip().replace('\n', ' ');
                if (!m.isEmpty()) detail = " (" + m + ")";
            } catch (Throwable ignored) {
                // no detail
            }
        }
        throw new AttnException(AttnException.Code.INTERNAL, "cuDNN " + call + " failed: " + name + detail);
    }

    /** A new cuDNN handle on the current CUDA context (needs a device). */
    MemorySegment createHandle() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = a.allocate(ADDRESS);
            check((int) create.invokeExact(h), "cudnnCreate");
            return h.get(ADDRESS, 0);
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnCreate failed: " + t, t);
        }
    }

    void setStream(MemorySegment handle, long stream) {
        try {
            check((int) setStream.invokeExact(handle, MemorySegment.ofAddress(stream)), "cudnnSetStream");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnSetStream failed: " + t, t);
        }
    }

    void destroyHandle(MemorySegment handle) {
        try {
            check((int) destroy.invokeExact(handle), "cudnnDestroy");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnDestroy failed: " + t, t);
        }
    }

    /** A new backend descriptor of {@code type}. */
    MemorySegment create(int type) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment d = a.allocate(ADDRESS);
            check((int) createDesc.invokeExact(type, d), "cudnnBackendCreateDescriptor(" + type + ")");
            return d.get(ADDRESS, 0);
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendCreateDescriptor failed: " + t, t);
        }
    }

    void destroy(MemorySegment desc) {
        if (desc == null || desc.equals(MemorySegment.NULL)) return;
        try {
            int ignored = (int) destroyDesc.invokeExact(desc);
        } catch (Throwable ignored) {
            // freeing: nothing to do about a failure
        }
    }

    void finalize(MemorySegment desc, String what) {
        try {
            check((int) finalizeDesc.invokeExact(desc), "cudnnBackendFinalize(" + what + ")");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendFinalize failed: " + t, t);
        }
    }

    /** Sets attribute {@code name} of {@code type} to the {@code count} elements at {@code values}. */
    void set(MemorySegment desc, int name, int type, long count, MemorySegment values) {
        try {
            check((int) setAttr.invokeExact(desc, name, type, count, values), "cudnnBackendSetAttribute(" + name + ")");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendSetAttribute failed: " + t, t);
        }
    }

    void setLongs(MemorySegment desc, int name, long... v) {
        try (Arena a = Arena.ofConfined()) {
            set(desc, name, TYPE_INT64, v.length, a.allocateFrom(JAVA_LONG, v));
        }
    }

    /** A 32-bit enum attribute (data type, pointwise mode, reduction operator, heuristics mode). */
    void setEnum(MemorySegment desc, int name, int type, int value) {
        try (Arena a = Arena.ofConfined()) {
            set(desc, name, type, 1, a.allocateFrom(JAVA_INT, value));
        }
    }

    void setBool(MemorySegment desc, int name, boolean value) {
        try (Arena a = Arena.ofConfined()) {
            set(desc, name, TYPE_BOOLEAN, 1, a.allocateFrom(JAVA_BYTE, (byte) (value ? 1 : 0)));
        }
    }

    /** Descriptor-valued attributes (an operation's tensors, a graph's operations, ...). */
    void setDescs(MemorySegment desc, int name, MemorySegment... values) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment arr = a.allocate(ADDRESS, values.length);
            for (int i = 0; i < values.length; i++) arr.setAtIndex(ADDRESS, i, values[i]);
            set(desc, name, TYPE_BACKEND_DESCRIPTOR, values.length, arr);
        }
    }

    void setHandle(MemorySegment desc, int name, MemorySegment handle) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = a.allocate(ADDRESS);
            h.set(ADDRESS, 0, handle);
            set(desc, name, TYPE_HANDLE, 1, h);
        }
    }

    void setPointers(MemorySegment desc, int name, long... addresses) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment arr = a.allocate(ADDRESS, Math.max(1, addresses.length));
            for (int i = 0; i < addresses.length; i++)
                arr.setAtIndex(ADDRESS, i, MemorySegment.ofAddress(addresses[i]));
            set(desc, name, TYPE_VOID_PTR, addresses.length, arr);
        }
    }

    /** One INT64 attribute of a finalized descriptor (a plan's workspace size). */
    long getLong(MemorySegment desc, int name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_LONG), v = a.allocate(JAVA_LONG);
            check(
                    (int) getAttr.invokeExact(desc, name, TYPE_INT64, 1L, n, v),
                    "cudnnBackendGetAttribute(" + name + ")");
            return v.get(JAVA_LONG, 0);
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendGetAttribute failed: " + t, t);
        }
    }

    /**
     * The engine configurations a finalized heuristics descriptor proposes, best first: as many ENGINECFG descriptors as
     * it reports (at most {@code max}), created here and filled by cuDNN; the caller destroys them.
     */
    List<MemorySegment> heuristicResults(MemorySegment heur, int max) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_LONG);
            check(
                    (int) getAttr.invokeExact(
                            heur, ATTR_ENGINEHEUR_RESULTS, TYPE_BACKEND_DESCRIPTOR, 0L, n, MemorySegment.NULL),
                    "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS count)");
            int count = (int) Math.min(max, n.get(JAVA_LONG, 0));
            List<MemorySegment> cfgs = new ArrayList<>();
            if (count == 0) return cfgs;
            MemorySegment arr = a.allocate(ADDRESS, count);
            try {
                for (int i = 0; i < count; i++) {
                    cfgs.add(create(ENGINECFG_DESCRIPTOR));
                    arr.setAtIndex(ADDRESS, i, cfgs.get(i));
                }
                check(
                        (int) getAttr.invokeExact(
                                heur, ATTR_ENGINEHEUR_RESULTS, TYPE_BACKEND_DESCRIPTOR, (long) count, n, arr),
                        "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS)");
            } catch (RuntimeException e) {
                for (MemorySegment c : cfgs) destroy(c);
                throw e;
            }
            int got = (int) Math.min(count, n.get(JAVA_LONG, 0));
            while (cfgs.size() > got) destroy(cfgs.removeLast());
            return cfgs;
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendGetAttribute failed: " + t, t);
        }
    }

    void execute(MemorySegment handle, MemorySegment plan, MemorySegment pack) {
        try {
            check((int) execute.invokeExact(handle, plan, pack), "cudnnBackendExecute");
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(AttnException.Code.INTERNAL, "cudnnBackendExecute failed: " + t, t);
        }
    }

    /** Host memory holding one float (a by-value scalar of a variant pack). */
    static MemorySegment hostFloat(Arena a, float v) {
        return a.allocateFrom(JAVA_FLOAT, v);
    }
}
