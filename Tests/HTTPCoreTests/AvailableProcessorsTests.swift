import Foundation
@testable import HostResources
import HistoryTestSupport
import Testing

/// How many processors the server sizes its threads by: the affinity's
/// count, capped by the tightest cgroup CPU quota, read from the files a
/// container runtime writes (laid out here in a temporary folder as they
/// are on a host, in a cgroup v2 container and in a cgroup v1 container).
@Suite struct AvailableProcessorsTests {
    @Test func aQuotaCapsTheAffinityRoundedUp() {
        #expect(AvailableProcessors.limited(affinity: 64, online: 64, quota: 1.5) == 2)
        #expect(AvailableProcessors.limited(affinity: 64, online: 64, quota: 0.2) == 1)
        #expect(AvailableProcessors.limited(affinity: 2, online: 64, quota: 8) == 2)
        #expect(AvailableProcessors.limited(affinity: 3, online: 8, quota: nil) == 3)
        // The affinity unreadable: the online count.
        #expect(AvailableProcessors.limited(affinity: 0, online: 8, quota: nil) == 8)
        #expect(AvailableProcessors.limited(affinity: 0, online: 0, quota: nil) == 1)
    }

    @Test func theFilesParse() {
        #expect(CgroupCPUQuota.parseV2("150000 100000\n") == 1.5)
        #expect(CgroupCPUQuota.parseV2("max 100000\n") == nil)
        #expect(CgroupCPUQuota.parseV2("") == nil)
        #expect(CgroupCPUQuota.parseV1(quota: "200000\n", period: "100000\n") == 2)
        #expect(CgroupCPUQuota.parseV1(quota: "-1\n", period: "100000\n") == nil)
        #expect(CgroupCPUQuota.parseV1(quota: "x", period: "100000") == nil)
    }

    /// cgroup v2 on a host: the process's own cgroup and its parents are
    /// under the mount; the tightest of them counts.
    @Test func cgroupV2TakesTheTightestAlongThePath() throws {
        try withTemporaryDirectory { folder in
            let root = folder.url.path
            try write("max 100000\n", to: root + "/cpu.max")
            try write("300000 100000\n", to: root + "/service/cpu.max")
            try write("250000 100000\n", to: root + "/service/app/cpu.max")
            try write("max 100000\n", to: root + "/service/app/instance/cpu.max")
            let quota = CgroupCPUQuota.quota(cgroups: "0::/service/app/instance\n", root: root, read: read)
            #expect(quota == 2.5)
            #expect(CgroupCPUQuota.quota(cgroups: "0::/elsewhere\n", root: root, read: read) == nil)
        }
    }

    /// cgroup v1 in a container: `/proc/self/cgroup` names the host's path,
    /// which does not exist inside, where the mount is the container's own
    /// cgroup; the controllers' folder may be `cpu,cpuacct`.
    @Test func cgroupV1InAContainerReadsTheMountsOwnFiles() throws {
        try withTemporaryDirectory { folder in
            let root = folder.url.path
            try write("150000\n", to: root + "/cpu,cpuacct/cpu.cfs_quota_us")
            try write("100000\n", to: root + "/cpu,cpuacct/cpu.cfs_period_us")
            let cgroups = """
                12:memory:/docker/0123abcd
                4:cpu,cpuacct:/docker/0123abcd
                1:name=systemd:/docker/0123abcd
                0::/system.slice/containerd.service

                """
            #expect(CgroupCPUQuota.quota(cgroups: cgroups, root: root, read: read) == 1.5)
            // No quota set (-1): none.
            try write("-1\n", to: root + "/cpu,cpuacct/cpu.cfs_quota_us")
            #expect(CgroupCPUQuota.quota(cgroups: cgroups, root: root, read: read) == nil)
        }
    }

    @Test func withoutTheFilesThereIsNoQuota() {
        #expect(CgroupCPUQuota.quota(cgroups: nil, root: "/nonexistent", read: read) == nil)
        #expect(CgroupCPUQuota.quota(cgroups: "0::/\n", root: "/nonexistent", read: read) == nil)
        #expect(CgroupCPUQuota.quota(cgroups: "garbage\n::\n", root: "/nonexistent", read: read) == nil)
    }

    @Test func theFoldersGoUpToTheMount() {
        #expect(CgroupCPUQuota.folders(from: "/m", along: "/a/b") == ["/m/a/b", "/m/a", "/m"])
        #expect(CgroupCPUQuota.folders(from: "/m", along: "/") == ["/m"])
    }

    private func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
