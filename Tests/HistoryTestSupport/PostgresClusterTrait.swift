import Testing

/// Gives a whole suite (its nested suites included) the process's shared
/// `PostgresTestCluster` (`PostgresTestCluster.shared()`, started on first
/// use, stopped when the process exits): a cluster takes seconds to create,
/// a database in it milliseconds, so tests share the server and each makes
/// its own database (`withTestDatabase`). A test that stops the server
/// makes a cluster of its own with `withPostgresCluster`.
///
/// ```swift
/// @Suite(.postgresCluster) struct PostgresStoreTests {
///     @Test func appends() async throws {
///         try await withTestDatabase { uri in ... }
///     }
/// }
/// ```
public struct PostgresClusterTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        // A suite given the trait is scoped once; a nested suite or test
        // that is already inside a cluster's scope shares it.
        if PostgresTestCluster.current != nil {
            try await function()
            return
        }
        try await PostgresTestCluster.$current.withValue(try PostgresTestCluster.shared()) {
            try await function()
        }
    }
}

extension Trait where Self == PostgresClusterTrait {
    /// One throwaway PostgreSQL server for the suite; see `PostgresClusterTrait`.
    public static var postgresCluster: Self { Self() }
}
