package org.apache.hudi.hadoop.realtime;

/** Stands in for Hudi's class of this name; see HoodieParquetInputFormat. */
public class HoodieParquetRealtimeInputFormat extends org.apache.hudi.hadoop.HoodieParquetInputFormat {
}
