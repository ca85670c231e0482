import java.lang.reflect.Field;
import java.util.Arrays;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local listening on one address.
 *
 * <p>DynamoDB Local's own runner listens on every interface of the machine and has no option
 * to choose one. This starts the same server from the same command-line options, with its
 * one connector bound to the address given first: {@code BoundDynamoDBLocal HOST OPTIONS...}.
 * It reaches one private field of the pinned release (whose jar is checked by its SHA-256).
 */
public final class BoundDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(
            Arrays.copyOfRange(args, 1, args.length));
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        for (Connector connector : ((Server) field.get(proxy)).getConnectors()) {
            ((ServerConnector) connector).setHost(args[0]);
        }
        try {
            proxy.start();
        } catch (Exception failure) {  // a busy port, say: Jetty's threads must not linger
            System.err.println("DynamoDB Local could not start: " + failure);
            System.exit(1);
        }
    }
}
