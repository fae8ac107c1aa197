import HistoryTestSupport
import Testing

/// Every PostgreSQL suite nests in this one, so one throwaway server serves
/// them all (each test makes its own database in it) and is stopped when
/// they end, whatever their outcome.
@Suite(.postgresCluster)
struct PostgresTests {}
