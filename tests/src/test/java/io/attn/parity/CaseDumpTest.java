package io.attn.parity;

import io.attn.graph.Node;
import io.attn.reference.Reference;
import java.io.PrintWriter;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Dev tool, off by default: writes every parity case (op, params, inputs, reference output) to the file named by
 * {@code -Dattn.dumpCases=PATH}, for {@code tests/tools/numpy_crosscheck.py}, which recomputes each case with an
 * independent numpy implementation. Run: {@code mvn -pl tests -am verify -Dtest=CaseDumpTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dattn.dumpCases=/tmp/cases.txt}.
 */
class CaseDumpTest {
    @Test
    @EnabledIfSystemProperty(named = "attn.dumpCases", matches = ".+")
    void dump() throws Exception {
        try (PrintWriter w = new PrintWriter(System.getProperty("attn.dumpCases"), "UTF-8")) {
            for (ParityCase c : ParityCases.all()) {
                Node n = c.node();
                w.println("case\t" + c.name());
                w.println("op\t" + n.op() + "\t" + n.params());
                for (int i = 0; i < n.inputs().size(); i++) {
                    StringBuilder sb = new StringBuilder(
                            "in\t" + Arrays.toString(n.input(i).shape().dims()) + "\t");
                    for (float f : ParityHarness.leafData(c, n.input(i)))
                        sb.append(f).append(' ');
                    w.println(sb);
                }
                StringBuilder sb =
                        new StringBuilder("ref\t" + Arrays.toString(n.shape().dims()) + "\t");
                for (double v : Reference.run(c.graph(), c.inputs()).get(0))
                    sb.append(v).append(' ');
                w.println(sb);
            }
        }
    }
}
