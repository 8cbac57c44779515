package io.attn.text.onnx;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.attn.AttnException;
import io.attn.text.onnx.proto.OnnxProto.ModelProto;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One .onnx file: its name for messages, its directory for external data, and its parsing. Immutable; safe to share,
 * though one read uses it alone.
 */
final class ModelFile {
    private final Path path;
    private final String name;
    private final Path dir;

    ModelFile(Path path) {
        this.path = path;
        Path fileName = path.getFileName();
        this.name = fileName == null ? path.toString() : fileName.toString();
        this.dir = path.toAbsolutePath().normalize().getParent();
    }

    /** The directory external data locations are relative to. */
    Path dir() {
        return dir;
    }

    /** A BAD_INPUT failure whose one-line message starts with the file name. */
    AttnException bad(String what) {
        return AttnException.badInput(name + ": " + what);
    }

    /** As {@link #bad(String)}, keeping the cause for debugging. */
    AttnException bad(String what, Throwable cause) {
        return new AttnException(AttnException.Code.BAD_INPUT, name + ": " + what, cause);
    }

    /**
     * The model, parsed as a stream from the file.
     *
     * <p>Not from a mapping with aliasing: protobuf-java 4.36 copies a buffer that has no array (a mapping) into one
     * byte[] before parsing, and aliasing {@code raw_data} into that array would keep all of it alive until the last
     * weight is converted. Parsed from a stream, each {@code raw_data} is its own array, which {@link OnnxBert} drops as
     * soon as it has converted it: the heap needs about the file's size plus the largest tensor as float32.
     */
    ModelProto parse() {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size == 0) throw bad("empty file, not an ONNX model");
            if (size > Integer.MAX_VALUE)
                throw bad("the file has " + size + " bytes, more than the 2 GiB one protobuf message can hold;"
                        + " a model this big keeps its weights in external data files");
            CodedInputStream in = CodedInputStream.newInstance(Channels.newInputStream(ch), 1 << 16);
            ModelProto model = ModelProto.parseFrom(in);
            if (!model.hasGraph()) throw bad("not an ONNX model: it has no graph");
            return model;
        } catch (InvalidProtocolBufferException e) {
            throw bad("truncated or not an ONNX protobuf (" + e.getMessage() + ")");
        } catch (NoSuchFileException e) {
            throw bad("no such file");
        } catch (AccessDeniedException e) {
            throw bad("permission denied");
        } catch (IOException e) {
            throw bad("cannot read the file (" + e.getMessage() + ")");
        }
    }
}
