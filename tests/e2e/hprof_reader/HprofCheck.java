// SPDX-License-Identifier: Apache-2.0
/*
 * HprofCheck.java - reads an hprof file with the NetBeans profiler's heap library (the
 * engine of VisualVM's heap walker, from Maven Central: no heapref code) and prints, as
 * one JSON object, what tests/e2e/test_hprof.py compares with heapref's own analysis:
 * the objects (thread objects apart) and their shallow bytes as the reader parsed them,
 * how many of them the reader finds no path to a GC root for, the class names, and on
 * request the values of one field of a class's instances and the path from the first
 * instance of a class (of one of a given shallow size) to its GC root (with, for a
 * Java-frame root, its thread's class and the method of its frame).
 *
 * usage: java -cp LIB:DIR HprofCheck FILE [--field CLASS FIELD] [--path CLASS]
 *                                         [--path-sized CLASS BYTES]
 */
import java.io.File;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

import org.netbeans.lib.profiler.heap.FieldValue;
import org.netbeans.lib.profiler.heap.GCRoot;
import org.netbeans.lib.profiler.heap.Heap;
import org.netbeans.lib.profiler.heap.HeapFactory;
import org.netbeans.lib.profiler.heap.Instance;
import org.netbeans.lib.profiler.heap.JavaClass;
import org.netbeans.lib.profiler.heap.JavaFrameGCRoot;
import org.netbeans.lib.profiler.heap.ObjectArrayInstance;
import org.netbeans.lib.profiler.heap.PrimitiveArrayInstance;
import org.netbeans.lib.profiler.heap.ThreadObjectGCRoot;

public class HprofCheck {
    static final String THREAD_CLASS_PREFIX = "goroutine ";

    static int typeSize(String type) {
        switch (type) {
        case "boolean": case "byte": return 1;
        case "short": case "char": return 2;
        case "int": case "float": return 4;
        default: return 8; /* long, double, object (8-byte ids) */
        }
    }

    /* The bytes of an instance as its record holds them: fields, or elements. */
    static long shallowBytes(Instance i) {
        if (i instanceof PrimitiveArrayInstance) {
            String name = i.getJavaClass().getName();
            return (long) ((PrimitiveArrayInstance) i).getLength()
                    * typeSize(name.substring(0, name.length() - 2));
        }
        if (i instanceof ObjectArrayInstance)
            return 8L * ((ObjectArrayInstance) i).getLength();
        long n = 0;
        for (Object o : i.getFieldValues())
            n += typeSize(((FieldValue) o).getField().getType().getName());
        return n;
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String names(Iterable<String> xs) {
        List<String> q = new ArrayList<>();
        for (String x : xs) q.add(quote(x));
        return "[" + String.join(",", q) + "]";
    }

    /* The instance of class name with the lowest id, or null. */
    static Instance first(Heap heap, String name, long bytes) {
        JavaClass c = heap.getJavaClassByName(name);
        Instance best = null;
        if (c == null) return null;
        for (Object o : c.getInstances()) {
            Instance i = (Instance) o;
            if (bytes >= 0 && shallowBytes(i) != bytes) continue;
            if (best == null || i.getInstanceId() < best.getInstanceId()) best = i;
        }
        return best;
    }

    /* The classes on the path from the instance to its GC root, and the root's kind. */
    static String path(Heap heap, Instance i) {
        List<String> steps = new ArrayList<>();
        for (int n = 0; i != null && n < 100000; n++) {
            steps.add(i.getJavaClass().getName());
            if (i.isGCRoot()) {
                GCRoot r = heap.getGCRoot(i);
                JavaClass c = heap.getJavaClassByID(i.getInstanceId()); /* a class object */
                return "{\"classes\":" + names(steps) + ",\"root_kind\":"
                        + quote(r == null ? "?" : r.getKind()) + ",\"root_class\":"
                        + (c == null ? "null" : quote(c.getName())) + frame(r) + "}";
            }
            i = i.getNearestGCRootPointer();
        }
        return "{\"classes\":" + names(steps) + ",\"root_kind\":null}";
    }

    /* For a Java-frame root: its thread's class and the method of its frame. */
    static String frame(GCRoot r) {
        if (!(r instanceof JavaFrameGCRoot)) return "";
        JavaFrameGCRoot f = (JavaFrameGCRoot) r;
        ThreadObjectGCRoot t = f.getThreadGCRoot();
        StackTraceElement[] trace = t == null ? null : t.getStackTrace();
        int n = f.getFrameNumber();
        String method = trace != null && n >= 0 && n < trace.length ? trace[n].getMethodName() : null;
        return ",\"root_thread\":" + (t == null ? "null" : quote(t.getInstance().getJavaClass().getName()))
                + ",\"root_method\":" + (method == null ? "null" : quote(method));
    }

    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        long objects = 0, bytes = 0, threads = 0, unrooted = 0;
        TreeSet<String> classes = new TreeSet<>();
        for (Iterator<?> it = heap.getAllInstancesIterator(); it.hasNext();) {
            Instance i = (Instance) it.next();
            String name = i.getJavaClass().getName();
            if (name.startsWith(THREAD_CLASS_PREFIX)) {
                threads++;
                continue;
            }
            objects++;
            bytes += shallowBytes(i);
            if (!i.isGCRoot() && i.getNearestGCRootPointer() == null) unrooted++;
        }
        for (Object c : heap.getAllClasses()) classes.add(((JavaClass) c).getName());
        StringBuilder out = new StringBuilder();
        out.append("{\"objects\":").append(objects).append(",\"bytes\":").append(bytes)
           .append(",\"threads\":").append(threads).append(",\"unrooted\":").append(unrooted)
           .append(",\"gc_roots\":").append(heap.getGCRoots().size())
           .append(",\"classes\":").append(names(classes));
        for (int a = 1; a < args.length; a++) {
            if (args[a].equals("--field")) {
                JavaClass c = heap.getJavaClassByName(args[a + 1]);
                List<String> values = new ArrayList<>();
                if (c != null)
                    for (Object o : c.getInstances())
                        values.add(String.valueOf(((Instance) o).getValueOfField(args[a + 2])));
                out.append(",\"field\":").append(names(values));
                a += 2;
            } else if (args[a].equals("--path")) {
                Instance i = first(heap, args[a + 1], -1);
                out.append(",\"path\":").append(i == null ? "null" : path(heap, i));
                a += 1;
            } else if (args[a].equals("--path-sized")) {
                Instance i = first(heap, args[a + 1], Long.parseLong(args[a + 2]));
                out.append(",\"path\":").append(i == null ? "null" : path(heap, i));
                a += 2;
            }
        }
        System.out.println(out.append("}"));
    }
}
