<?xml version="1.0" encoding="UTF-8"?>
<!-- report.xsl - a grouping/sorting/aggregation stylesheet for the Saxon run (bench/real-java.sh). -->
<xsl:stylesheet version="3.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
                xmlns:xs="http://www.w3.org/2001/XMLSchema" exclude-result-prefixes="xs">
  <xsl:output method="xml" indent="yes"/>
  <xsl:template match="/orders">
    <report>
      <xsl:for-each-group select="order" group-by="@region">
        <xsl:sort select="current-grouping-key()"/>
        <region name="{current-grouping-key()}" orders="{count(current-group())}">
          <xsl:for-each-group select="current-group()/line" group-by="@product">
            <xsl:sort select="sum(for $l in current-group() return $l/@qty * $l/@price)" order="descending"/>
            <xsl:if test="position() le 20">
              <product id="{current-grouping-key()}"
                       revenue="{format-number(sum(for $l in current-group() return $l/@qty * $l/@price), '0.00')}"
                       mentions="{count(current-group()/../note[contains(., current-grouping-key())])}"/>
            </xsl:if>
          </xsl:for-each-group>
          <months>
            <xsl:for-each-group select="current-group()" group-by="substring(@date, 6, 2)">
              <xsl:sort select="current-grouping-key()"/>
              <month m="{current-grouping-key()}" n="{count(current-group())}"
                     words="{string-length(string-join(current-group()/note, ' '))}"/>
            </xsl:for-each-group>
          </months>
        </region>
      </xsl:for-each-group>
    </report>
  </xsl:template>
</xsl:stylesheet>
