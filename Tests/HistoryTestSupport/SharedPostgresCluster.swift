import Foundation
import Synchronization

extension PostgresTestCluster {
    /// The one cluster of this test process, started on first use and
    /// destroyed when the process exits: the HTTP suites on
    /// `HISTORY_TEST_STORE=postgres` start hundreds of servers, each on its
    /// own database, and a cluster takes seconds to create where a database
    /// takes milliseconds. `.postgresCluster` suites share it too.
    ///
    /// Suites that stop or kill the server make their own with
    /// `withPostgresCluster`, so this one stays up for the whole run.
    public static func shared() throws -> PostgresTestCluster {
        try sharedCluster.withLock { (cluster: inout PostgresTestCluster?) throws -> PostgresTestCluster in
            if let cluster { return cluster }
            let started = try PostgresTestCluster.start()
            cluster = started
            // A process that ends without `exit` (a crash, SIGKILL) leaves
            // the folder and server behind; there is no hook for that.
            atexit { destroySharedCluster() }
            return started
        }
    }
}

private let sharedCluster = Mutex<PostgresTestCluster?>(nil)

/// `atexit`'s handler: a plain function, which a C function pointer may be.
private func destroySharedCluster() {
    let cluster = sharedCluster.withLock { (cluster: inout PostgresTestCluster?) -> PostgresTestCluster? in
        defer { cluster = nil }
        return cluster
    }
    cluster?.destroy()
}
