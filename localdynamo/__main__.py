"""``python -m localdynamo``: fetch DynamoDB Local and check Java, before anything starts."""
import sys

from . import distribution, jvm


def main() -> int:
    try:
        release = distribution.locate()
        java = jvm.find_java()
    except (distribution.DistributionError, jvm.JavaMissing) as exc:
        print(exc, file=sys.stderr)
        return 1
    bound = jvm.bound_launcher(java, release) is not None
    print(f"DynamoDB Local {distribution.VERSION} in {release.home}; {java} "
          f"(Java {jvm.java_major_version(java)}); "
          + ("binds the address asked for." if bound else "listens on every interface (no javac)."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
