package io.attn.cli;

import io.attn.tensor.Tensor;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * Draws attention weights as a PNG heatmap with the JDK alone (headless AWT): one panel per matrix, query tokens down
 * the side, key tokens along the top (rotated), a colour bar from 0 to the largest weight shown.
 */
final class Heatmap {
    private Heatmap() {}

    /** A titled {@code (L, S)} matrix. */
    record Panel(String title, float[] w, int rows, int cols) {}

    /** Panels of {@code (L, S)} or {@code (H, L, S)} weights (one panel per head). */
    static List<Panel> panels(String title, Tensor weights) {
        int r = weights.rank();
        int l = weights.dim(r - 2), s = weights.dim(r - 1);
        int n = weights.size() / (l * s);
        if (n == 1) return List.of(new Panel(title, weights.data(), l, s));
        java.util.ArrayList<Panel> out = new java.util.ArrayList<>();
        for (int h = 0; h < n; h++) {
            float[] w = java.util.Arrays.copyOfRange(weights.data(), h * l * s, (h + 1) * l * s);
            out.add(new Panel(title + " head " + h, w, l, s));
        }
        return out;
    }

    static byte[] png(List<Panel> panels, List<String> rowLabels, List<String> colLabels) {
        System.setProperty("java.awt.headless", "true");
        int rows = panels.get(0).rows(), cols = panels.get(0).cols();
        int cell = Math.max(6, Math.min(40, 640 / Math.max(rows, cols)));
        Font font = new Font(Font.SANS_SERIF, Font.PLAIN, Math.max(9, Math.min(13, cell - 2)));
        BufferedImage probe = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
        Graphics2D pg = probe.createGraphics();
        pg.setFont(font);
        FontMetrics fm = pg.getFontMetrics();
        int labelW = 0;
        for (String t : rowLabels) labelW = Math.max(labelW, fm.stringWidth(t));
        int colLabelH = 0;
        for (String t : colLabels) colLabelH = Math.max(colLabelH, fm.stringWidth(t));
        pg.dispose();
        boolean labelCells = cell >= 8;
        int pad = 12, titleH = fm.getHeight() + 6;
        int panelW = pad + (labelCells ? labelW + 6 : 0) + cols * cell + pad;
        int panelH = titleH + (labelCells ? colLabelH + 6 : 0) + rows * cell + pad;
        int perRow = Math.max(1, Math.min(panels.size(), (int) Math.ceil(Math.sqrt(panels.size()))));
        int gridRows = (panels.size() + perRow - 1) / perRow;
        int barW = 60;
        int width = perRow * panelW + barW, height = Math.max(gridRows * panelH, 200);
        float max = 0;
        for (Panel p : panels) for (float v : p.w()) if (Float.isFinite(v)) max = Math.max(max, v);
        if (max <= 0) max = 1;

        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setFont(font);
        for (int p = 0; p < panels.size(); p++) {
            Panel panel = panels.get(p);
            int ox = (p % perRow) * panelW + pad, oy = (p / perRow) * panelH;
            g.setColor(Color.BLACK);
            g.drawString(panel.title(), ox, oy + fm.getAscent() + 2);
            int gx = ox + (labelCells ? labelW + 6 : 0), gy = oy + titleH + (labelCells ? colLabelH + 6 : 0);
            if (labelCells) {
                for (int i = 0; i < rows; i++)
                    g.drawString(label(rowLabels, i), ox, gy + i * cell + (cell + fm.getAscent()) / 2 - 1);
                AffineTransform saved = g.getTransform();
                for (int j = 0; j < cols; j++) {
                    g.setTransform(saved);
                    g.translate(gx + j * cell + (cell + fm.getAscent()) / 2 - 1, gy - 4);
                    g.rotate(-Math.PI / 2);
                    g.drawString(label(colLabels, j), 0, 0);
                }
                g.setTransform(saved);
            }
            for (int i = 0; i < rows; i++)
                for (int j = 0; j < cols; j++) {
                    g.setColor(colour(panel.w()[i * cols + j] / max));
                    g.fillRect(gx + j * cell, gy + i * cell, cell, cell);
                }
            g.setColor(Color.GRAY);
            g.setStroke(new BasicStroke(1));
            g.drawRect(gx, gy, cols * cell, rows * cell);
        }
        // colour bar
        int bx = width - barW + 15, by = 30, bh = height - 60;
        for (int y = 0; y < bh; y++) {
            g.setColor(colour(1 - (float) y / bh));
            g.fillRect(bx, by + y, 14, 1);
        }
        g.setColor(Color.BLACK);
        g.drawString(String.format(java.util.Locale.ROOT, "%.2f", max), bx, by - 4);
        g.drawString("0", bx, by + bh + fm.getAscent() + 2);
        g.dispose();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            ImageIO.write(img, "png", bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static String label(List<String> labels, int i) {
        return i < labels.size() ? labels.get(i) : String.valueOf(i);
    }

    /** White (0) through orange to dark red (1). */
    static Color colour(float t) {
        t = Math.max(0, Math.min(1, Float.isFinite(t) ? t : 0));
        float r = 1f - 0.45f * Math.max(0, t - 0.5f) * 2;
        float gg = 1f - 0.95f * t;
        float b = 1f - t;
        return new Color(Math.max(0, Math.min(1, r)), Math.max(0, gg), Math.max(0, b));
    }
}
