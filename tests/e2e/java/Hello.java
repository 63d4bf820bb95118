/* Hello.java - a JVM that must run normally whatever the agent options are. */
public class Hello {
    public static void main(String[] args) {
        System.out.println("Hello from the JVM");
    }
}
