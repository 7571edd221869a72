package org.apache.hudi.hadoop;

/** Stands in for Hudi's class of this name (hudi-hadoop-mr, not on PyPI) so that Spark's Thrift server can run
 * DDL on tables registered with it: the tests register and alter tables, they never read through it. */
public class HoodieParquetInputFormat extends org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat {
}
